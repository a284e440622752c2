//! Embeds the catalog in `patterns/` (at the workspace root) into the library.
//!
//! Writes `$OUT_DIR/builtin_catalog.rs`: a list of (relative path, contents)
//! for every `.toml` file under `patterns/`, sorted by path so that the
//! catalog's order is stable.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../../patterns");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut code = String::from("/// Built-in catalog files: (path relative to `patterns/`, contents).\npub static FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().unwrap();
        code.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            abs.to_string_lossy()
        ));
    }
    code.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("builtin_catalog.rs"), code).unwrap();
    std::fs::write(out_dir.join("ids.rs"), ids(&root)).unwrap();
}

/// Constants for every class and cause id of the built-in catalog, so that
/// code naming an id that does not exist does not compile.
fn ids(root: &Path) -> String {
    let mut code = String::new();
    for (file, module, what) in [
        ("classes.toml", "class", "class"),
        ("causes.toml", "cause", "cause"),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        code.push_str(&format!(
            "/// The built-in catalog's {what} ids (`patterns/{file}`).\npub mod {module} {{\n"
        ));
        let mut all = Vec::new();
        for line in text.lines() {
            let Some(id) = line
                .strip_prefix("id = \"")
                .and_then(|r| r.strip_suffix('"'))
            else {
                continue;
            };
            let name = id.to_ascii_uppercase().replace(['.', '-'], "_");
            code.push_str(&format!(
                "    /// `{id}`\n    pub const {name}: &str = {id:?};\n"
            ));
            all.push(name);
        }
        code.push_str(&format!(
            "    /// Every {what} id above.\n    pub const ALL: &[&str] = &[{}];\n}}\n",
            all.join(", ")
        ));
    }
    code
}
