//! Embeds the catalog in `patterns/` (inside this crate, so that it travels
//! with the published package; the workspace root links to it) into the
//! library.
//!
//! Writes `$OUT_DIR/builtin_catalog.rs`: a list of (relative path, contents)
//! for every `.toml` file under `patterns/`, sorted by path so that the
//! catalog's order is stable, and the same files as JSON: the library loads
//! those, since JSON parses several times faster than TOML and start-up
//! matters when a fleet scans thousands of small logs. A file that is not
//! valid TOML fails the build.

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
    let root = manifest.join("patterns");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    // A package built without its catalog would scan and find nothing:
    // fail the build instead.
    assert!(
        files.iter().any(|f| f.ends_with("classes.toml")),
        "{}: the built-in catalog is missing (no classes.toml)",
        root.display()
    );
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let json_dir = out_dir.join("catalog-json");
    let mut code = String::from("/// Built-in catalog files: (path relative to `patterns/`, contents).\npub static FILES: &[(&str, &str)] = &[\n");
    let mut json = String::from(
        "/// The same files as JSON, in the same order.\npub static FILES_JSON: &[&str] = &[\n",
    );
    for (i, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        let value: toml::Value = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not valid TOML: {e}", f.display()));
        let to = json_dir.join(format!("{i}.json"));
        std::fs::create_dir_all(&json_dir).unwrap();
        std::fs::write(&to, serde_json::to_string(&value).unwrap()).unwrap();
        json.push_str(&format!("    include_str!({:?}),\n", to.to_string_lossy()));
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
    json.push_str("];\n");
    code.push_str(&json);
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
