//! `cargo xtask package`: the library as crates.io would ship it carries
//! its catalog. Packages `cudnnlog`, unpacks the `.crate`, builds a program
//! against the unpacked copy (outside the workspace, so nothing of the
//! repository is in reach) and compares what it sees with the workspace's
//! own built-in catalog.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// The program built against the packaged crate: it prints the pattern,
/// class and probe counts of `Catalog::builtin()` and the class it finds
/// in one out-of-memory line.
const CONSUMER: &str = r#"
fn main() {
    let catalog = cudnnlog::Catalog::builtin().expect("the packaged catalog loads");
    let scanner = cudnnlog::ScannerBuilder::new().build(catalog);
    let mut sink = cudnnlog::report::FindingsSink::new(scanner.catalog());
    let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    scanner.scan_slice(log, &mut sink).expect("scan");
    let report = sink.into_report();
    let c = scanner.catalog();
    println!(
        "{} {} {} {}",
        c.patterns().len(),
        c.classes().len(),
        c.probes().len(),
        report.primary.unwrap_or_default()
    );
}
"#;

fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Packages, builds the consumer, compares; returns what it checked.
pub fn check(root: &Path) -> Result<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let version = cudnnlog_version(root)?;
    run(Command::new(&cargo).current_dir(root).args([
        "package",
        "-p",
        "cudnnlog",
        "--allow-dirty",
        "--no-verify",
        "--quiet",
    ]))?;
    let work = root.join("target/package-check");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("consumer/src"))?;
    let crate_file = root.join(format!("target/package/cudnnlog-{version}.crate"));
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&crate_file)
        .arg("-C")
        .arg(&work))?;
    let unpacked = work.join(format!("cudnnlog-{version}"));
    std::fs::write(
        work.join("consumer/Cargo.toml"),
        format!(
            "[package]\nname = \"consumer\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncudnnlog = {{ path = {:?} }}\n\n[workspace]\n\n\
             # Built once, run once: the quickest build.\n\
             [profile.dev]\nopt-level = 0\ndebug = false\nincremental = false\n",
            unpacked.display().to_string()
        ),
    )?;
    std::fs::write(work.join("consumer/src/main.rs"), CONSUMER)?;
    // The workspace's versions, so the build resolves the same crates.
    std::fs::copy(root.join("Cargo.lock"), work.join("consumer/Cargo.lock"))?;
    let seen = run(Command::new(&cargo)
        .current_dir(work.join("consumer"))
        .env("CARGO_TARGET_DIR", work.join("target"))
        .args(["run", "--quiet"]))?;
    let here = cudnnlog::Catalog::builtin()?;
    let expected = format!(
        "{} {} {} cuda.oom",
        here.patterns().len(),
        here.classes().len(),
        here.probes().len()
    );
    if seen.trim() != expected {
        bail!(
            "the packaged crate sees `{}` (patterns, classes, probes, class found); \
             the workspace has `{expected}`",
            seen.trim()
        );
    }
    Ok(format!(
        "cudnnlog-{version}.crate carries its catalog: {expected} (patterns, classes, probes, class found)\n"
    ))
}

fn cudnnlog_version(root: &Path) -> Result<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
    let value: toml::Value = toml::from_str(&manifest)?;
    value
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .context("no workspace.package.version in Cargo.toml")
}
