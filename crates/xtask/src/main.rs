//! `cargo xtask`: the project's chores.
//!
//! * `cargo xtask eval [-v] [--json] [DIR]` — scores the built-in catalog on
//!   the labelled wild corpus (`fixtures/wild` by default): class precision,
//!   recall and F1, primary accuracy, cause@1/@2, per context and family;
//!   then the culprit rank on the labelled multi-rank logs
//!   (`fixtures/culprits.toml`).
//! * `cargo xtask docs [--check]` — regenerates the README's class table.
//! * `cargo xtask prefilter [--add|--check]` — chooses the two-tier literal
//!   pass's fingerprints (`patterns/prefilter.txt`).
//! * `cargo xtask layers [--check]` — holds the library's imports against
//!   the floor plan in `crates/xtask/layers.toml`.
//! * `cargo xtask new-rule ID` — scaffolds an evidence rule (one file
//!   and one line of the `RULES` table).
//! * `cargo xtask new-class ID [FAMILY]` — scaffolds a failure class (its
//!   stanza in `classes.toml` and its first pattern file).
//! * `cargo xtask package` — checks that the packaged library carries its
//!   catalog.

use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;

const HELP: &str = "\
cargo xtask eval [-v|--verbose] [--json] [DIR]
    Score the built-in catalog on a labelled corpus (default: fixtures/wild).
    -v lists per-class counts and every case not scored perfect.
cargo xtask docs [--check]
    Regenerate the README's class table from the catalog and the golden
    reports (--check: fail when it is stale).
cargo xtask prefilter [--add|--check]
    Choose the fingerprints of the two-tier literal pass
    (patterns/prefilter.txt) from the catalog's anchors and the lines of
    fixtures/ (--add: keep the listed ones, but replace one the corpus
    shows firing on lines no anchor holds, when covering its anchors
    otherwise weighs less than half as much, and cover the anchors none
    covers; --check: fail when a fresh choice would differ).
cargo xtask layers [--check]
    Measure the library's imports against crates/xtask/layers.toml (rooms,
    floors, arrows, circles) and regenerate the table in
    docs/architecture.md (--check: fail on a forbidden import, a circle,
    a glob import or a stale table).
cargo xtask new-rule ID
    Scaffold an evidence rule: crates/cudnnlog/src/diagnose/rules/ID.rs
    and its lines in rules/mod.rs (its docs go in its module comment).
cargo xtask new-class ID [FAMILY]
    Scaffold a failure class (`family.name`): its stanza in
    patterns/classes.toml and its first pattern file, beside the patterns
    of its family; the tests fail until every TODO(new-class) is written.
cargo xtask package
    Package the library, build a program against the packaged copy and
    check that it sees the whole built-in catalog.
";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        print(HELP)?;
        return Ok(());
    };
    match cmd.as_str() {
        "eval" => eval(rest),
        "docs" => xtask::docs::run(&workspace_root(), rest.iter().any(|a| a == "--check")),
        "prefilter" => {
            let mode = if rest.iter().any(|a| a == "--check") {
                xtask::prefilter::Mode::Check
            } else if rest.iter().any(|a| a == "--add") {
                xtask::prefilter::Mode::Add
            } else {
                xtask::prefilter::Mode::Choose
            };
            print(&xtask::prefilter::run(&workspace_root(), mode)?)
        }
        "layers" => print(&xtask::layers::run(
            &workspace_root(),
            rest.iter().any(|a| a == "--check"),
        )?),
        "new-rule" => match rest {
            [id] => {
                let mut out = String::new();
                for f in xtask::rules::new_rule(&workspace_root(), id)? {
                    out += &format!("wrote {}\n", f.display());
                }
                out +=
                    "next: write its weigh function and module comment, then `cargo xtask docs`\n";
                print(&out)
            }
            _ => bail!("usage: cargo xtask new-rule ID\n{HELP}"),
        },
        "new-class" => match rest {
            [id] | [id, _] => {
                let family = rest.get(1).map(String::as_str);
                let mut out = String::new();
                for f in xtask::classes::new_class(&workspace_root(), id, family)? {
                    out += &format!("wrote {}\n", f.display());
                }
                out += "next: replace every TODO(new-class), then `cargo xtask docs` and `cargo test -p cudnnlog --test catalog`\n";
                print(&out)
            }
            _ => bail!("usage: cargo xtask new-class ID [FAMILY]\n{HELP}"),
        },
        "package" => print(&xtask::package::check(&workspace_root())?),
        "help" | "-h" | "--help" => print(HELP),
        other => bail!("unknown task `{other}`\n{HELP}"),
    }
}

fn print(s: &str) -> Result<()> {
    std::io::stdout().write_all(s.as_bytes())?;
    Ok(())
}

fn eval(args: &[String]) -> Result<()> {
    let (mut verbose, mut json, mut dir) = (false, false, None);
    for a in args {
        match a.as_str() {
            "-v" | "--verbose" => verbose = true,
            "--json" => json = true,
            s if s.starts_with('-') => bail!("unknown option `{s}`\n{HELP}"),
            s => dir = Some(PathBuf::from(s)),
        }
    }
    let dir = dir.unwrap_or_else(|| workspace_root().join("fixtures/wild"));
    let cases = xtask::eval::load(&dir)?;
    let scores = xtask::eval::score(&cases)?;
    let root = workspace_root();
    let culprits = xtask::culprits::score_culprits(&root, &root.join("fixtures/culprits.toml"))?;
    if json {
        let both = serde_json::json!({ "wild": scores, "culprit": culprits });
        print(&serde_json::to_string_pretty(&both)?)?;
        print("\n")
    } else {
        print(&xtask::eval::render(&scores, verbose))?;
        print(&xtask::culprits::render_culprits(&culprits, verbose))
    }
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}
