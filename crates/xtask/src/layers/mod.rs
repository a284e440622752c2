//! `cargo xtask layers [--check]`: the library's floor plan, held.
//!
//! `crates/xtask/layers.toml` lists the library's rooms (its top-level
//! modules), bottom floor first, each with what it holds and the rooms it
//! **may import**. This task reads every non-test file of
//! `crates/cudnnlog/src`, resolves each `crate::`, `super::` and `self::`
//! path (a `use` tree or a path in code; comments and strings blanked; a
//! name re-exported by `lib.rs` followed to its home) and measures:
//!
//! * **arrows**: distinct room → room imports (a `pub use` is a face, not
//!   an arrow);
//! * **forbidden** arrows: one the table does not allow, each named with
//!   its file and line;
//! * **upward** arrows: to a room on the same or a higher floor (floors
//!   follow from the table: a room stands one above the highest room it may
//!   import);
//! * **circles**: rooms that import each other in a loop, and, inside a
//!   folder, sibling files that do (the folder's `mod.rs` is its face and
//!   may use its children);
//! * **globs**: `use …::*` outside tests.
//!
//! `--check` fails on any forbidden arrow, circle or glob, on a room the
//! table does not list, and when the table in `docs/architecture.md`
//! (between `<!-- layers:begin -->` and `<!-- layers:end -->`) is stale.

mod parse;

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// The table: rooms bottom first.
#[derive(Debug, Deserialize)]
pub struct Table {
    /// Every room of the library.
    pub room: Vec<Room>,
}

/// One room of the table.
#[derive(Debug, Deserialize)]
pub struct Room {
    /// The top-level module's name (`lib` for the crate root's own items).
    pub name: String,
    /// What it holds, in a line.
    pub holds: String,
    /// The rooms it may import.
    #[serde(default)]
    pub may: Vec<String>,
}

/// One source file: its path under `src/` and its text.
pub struct File {
    /// Relative to the crate's `src/`, `/`-separated.
    pub rel: String,
    /// The file's text.
    pub text: String,
}

/// One import that crosses rooms.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arrow {
    /// The importing room.
    pub from: String,
    /// The imported room.
    pub to: String,
    /// Where: `file:line`.
    pub at: String,
}

/// What the measure found.
#[derive(Debug, Default)]
pub struct Plan {
    /// Rooms found in the code.
    pub rooms: BTreeSet<String>,
    /// Every crossing import, with its first place.
    pub arrows: BTreeMap<(String, String), String>,
    /// Sibling-file arrows inside folders: (folder, from, to) → place.
    pub siblings: BTreeMap<(String, String, String), String>,
    /// `use …::*` outside tests: places.
    pub globs: Vec<String>,
}

/// The measure's verdict against the table.
#[derive(Debug, Default)]
pub struct Findings {
    /// Arrows the table does not allow.
    pub forbidden: Vec<Arrow>,
    /// Arrows to a room on the same or a higher floor.
    pub upward: Vec<Arrow>,
    /// Room circles, each a sorted list of rooms.
    pub circles: Vec<Vec<String>>,
    /// Sibling circles inside folders.
    pub sibling_circles: Vec<Vec<String>>,
    /// Rooms in the code but not in the table, or the reverse.
    pub unlisted: Vec<String>,
    /// Globs outside tests.
    pub globs: Vec<String>,
    /// Floors the table makes.
    pub floors: usize,
}

impl Findings {
    /// Whether the floor plan holds.
    pub fn ok(&self) -> bool {
        self.forbidden.is_empty()
            && self.circles.is_empty()
            && self.sibling_circles.is_empty()
            && self.unlisted.is_empty()
            && self.globs.is_empty()
    }
}

/// Reads every `.rs` file under `src`.
pub fn read_tree(src: &Path) -> Result<Vec<File>> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src)?.to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&p)?;
                out.push(File { rel, text });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// The module path of a file (`scan/literal.rs` → `scan::literal`,
/// `scan/mod.rs` → `scan`, `lib.rs` → root).
fn module_of(rel: &str) -> Vec<String> {
    let stem = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// Measures the tree: rooms, crossing arrows, sibling arrows and globs.
pub fn measure(files: &[File]) -> Plan {
    let mut plan = Plan::default();
    // Test files: declared `#[cfg(test)] mod x;` in their parent.
    let mut test_mods: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut texts = BTreeMap::new();
    for f in files {
        let blanked = parse::blank(&f.text);
        let (code, tests) = parse::drop_tests(&blanked);
        let module = module_of(&f.rel);
        for t in tests {
            let mut m = module.clone();
            m.push(t);
            test_mods.insert(m);
        }
        texts.insert(f.rel.clone(), (module, code));
    }
    let is_test = |m: &[String]| (1..=m.len()).any(|k| test_mods.contains(&m[..k]));
    // The root's declared modules and re-exports.
    let root = texts
        .get("lib.rs")
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    let modules = declared_modules(&root);
    let reexports = root_reexports(&root);
    for (rel, (module, code)) in &texts {
        if is_test(module) {
            continue;
        }
        let from = module.first().cloned().unwrap_or_else(|| "lib".into());
        plan.rooms.insert(from.clone());
        for r in parse::refs(code, module) {
            let at = format!("{rel}:{}", r.line);
            if r.glob {
                plan.globs.push(at.clone());
            }
            if r.reexport {
                continue;
            }
            let target = follow(&r.path, &modules, &reexports);
            let to = match target.first() {
                Some(t) if modules.contains(t) => t.clone(),
                _ => "lib".to_string(),
            };
            if to != from {
                plan.arrows.entry((from.clone(), to)).or_insert(at);
            } else if module.len() >= 2 && target.len() >= 2 && target[0] == module[0] {
                // Inside one folder: sibling arrows (the folder itself is its face).
                let (a, b) = (&module[1], &target[1]);
                if a != b && module.len() >= 2 {
                    plan.siblings
                        .entry((module[0].clone(), a.clone(), b.clone()))
                        .or_insert(at);
                }
            }
        }
    }
    plan
}

fn declared_modules(root: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in root.lines() {
        let l = line
            .trim()
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ");
        if let Some(rest) = l.strip_prefix("mod ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// `pub use a::b::{C, D};` in the root → C → [a, b, C].
fn root_reexports(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for r in parse::refs(&root.replace("pub use ", "pub use crate::"), &[]) {
        if let Some(last) = r.path.last() {
            out.insert(last.clone(), r.path.clone());
        }
    }
    out
}

fn follow(
    path: &[String],
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut p = path.to_vec();
    for _ in 0..4 {
        match p.first() {
            Some(h) if !modules.contains(h) => match reexports.get(h) {
                Some(to) if to.first() != Some(h) => {
                    let mut np = to.clone();
                    np.extend(p[1..].iter().cloned());
                    p = np;
                }
                _ => break,
            },
            _ => break,
        }
    }
    p
}

/// Each room's floor: one above the highest room it may import.
pub fn floors(table: &Table) -> Result<BTreeMap<String, usize>> {
    let mut floor: BTreeMap<String, usize> = BTreeMap::new();
    for room in &table.room {
        let mut f = 0;
        for m in &room.may {
            match floor.get(m) {
                Some(&g) => f = f.max(g + 1),
                None => bail!(
                    "layers.toml: `{}` may import `{m}`, which is not listed below it",
                    room.name
                ),
            }
        }
        if floor.insert(room.name.clone(), f).is_some() {
            bail!("layers.toml: `{}` is listed twice", room.name);
        }
    }
    Ok(floor)
}

/// Holds the plan against the table.
pub fn judge(plan: &Plan, table: &Table) -> Result<Findings> {
    let floor = floors(table)?;
    let may: BTreeMap<&str, BTreeSet<&str>> = table
        .room
        .iter()
        .map(|r| (r.name.as_str(), r.may.iter().map(String::as_str).collect()))
        .collect();
    let mut f = Findings {
        floors: floor.values().max().map_or(0, |m| m + 1),
        globs: plan.globs.clone(),
        ..Findings::default()
    };
    for r in &plan.rooms {
        if !floor.contains_key(r) {
            f.unlisted
                .push(format!("`{r}` is in the code but not in layers.toml"));
        }
    }
    for r in &table.room {
        if r.name != "lib" && !plan.rooms.contains(&r.name) {
            f.unlisted.push(format!(
                "`{}` is in layers.toml but not in the code",
                r.name
            ));
        }
    }
    for ((from, to), at) in &plan.arrows {
        let arrow = Arrow {
            from: from.clone(),
            to: to.clone(),
            at: at.clone(),
        };
        if !may
            .get(from.as_str())
            .is_some_and(|m| m.contains(to.as_str()))
        {
            f.forbidden.push(arrow.clone());
        }
        if let (Some(a), Some(b)) = (floor.get(from), floor.get(to)) {
            if b >= a {
                f.upward.push(arrow);
            }
        }
    }
    let edges: Vec<(String, String)> = plan.arrows.keys().cloned().collect();
    f.circles = circles(&edges);
    let mut by_folder: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for (folder, a, b) in plan.siblings.keys() {
        by_folder
            .entry(folder)
            .or_default()
            .push((a.clone(), b.clone()));
    }
    for (folder, edges) in by_folder {
        for c in circles(&edges) {
            f.sibling_circles
                .push(c.into_iter().map(|m| format!("{folder}/{m}")).collect());
        }
    }
    Ok(f)
}

/// Strongly connected components of more than one node (Tarjan).
fn circles(edges: &[(String, String)]) -> Vec<Vec<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    let nodes: Vec<&str> = adj.keys().copied().collect();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut low: BTreeMap<&str, usize> = BTreeMap::new();
    let mut on: BTreeSet<&str> = BTreeSet::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    #[allow(clippy::too_many_arguments)]
    fn visit<'a>(
        v: &'a str,
        adj: &BTreeMap<&'a str, Vec<&'a str>>,
        index: &mut BTreeMap<&'a str, usize>,
        low: &mut BTreeMap<&'a str, usize>,
        on: &mut BTreeSet<&'a str>,
        stack: &mut Vec<&'a str>,
        out: &mut Vec<Vec<String>>,
        next: &mut usize,
    ) {
        index.insert(v, *next);
        low.insert(v, *next);
        *next += 1;
        stack.push(v);
        on.insert(v);
        for &w in &adj[v] {
            if !index.contains_key(w) {
                visit(w, adj, index, low, on, stack, out, next);
                let lw = low[w];
                let lv = low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if on.contains(w) {
                let iw = index[w];
                let lv = low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if low[v] == index[v] {
            let mut comp = Vec::new();
            while let Some(w) = stack.pop() {
                on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                out.push(comp);
            }
        }
    }
    for v in nodes {
        if !index.contains_key(v) {
            visit(
                v, &adj, &mut index, &mut low, &mut on, &mut stack, &mut out, &mut next,
            );
        }
    }
    out.sort();
    out
}

/// The table as markdown, for `docs/architecture.md`.
pub fn render_table(table: &Table) -> Result<String> {
    let floor = floors(table)?;
    let mut s = String::from("| floor | room | holds | may import |\n|---:|---|---|---|\n");
    for r in table.room.iter().rev() {
        let may = if r.may.is_empty() {
            "–".to_string()
        } else {
            r.may
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            s,
            "| {} | `{}` | {} | {} |",
            floor[&r.name], r.name, r.holds, may
        )?;
    }
    Ok(s)
}

/// The figures and every finding, for people.
pub fn render(plan: &Plan, f: &Findings) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "rooms {} · floors {} · arrows {} · upward {} · forbidden {} · circles {} · sibling circles {} · globs {}",
        plan.rooms.len(),
        f.floors,
        plan.arrows.len(),
        f.upward.len(),
        f.forbidden.len(),
        f.circles.len(),
        f.sibling_circles.len(),
        f.globs.len()
    );
    for a in &f.forbidden {
        let _ = writeln!(s, "forbidden: {} → {} ({})", a.from, a.to, a.at);
    }
    for a in &f.upward {
        let _ = writeln!(s, "upward: {} → {} ({})", a.from, a.to, a.at);
    }
    for c in &f.circles {
        let _ = writeln!(s, "circle: {}", c.join(" ⇄ "));
    }
    for c in &f.sibling_circles {
        let _ = writeln!(s, "sibling circle: {}", c.join(" ⇄ "));
    }
    for g in &f.globs {
        let _ = writeln!(s, "glob import: {g}");
    }
    for u in &f.unlisted {
        let _ = writeln!(s, "{u}");
    }
    s
}

const BEGIN: &str = "<!-- layers:begin";
const END: &str = "<!-- layers:end -->";

/// Runs the task: measure, print, and with `check` fail on any finding or
/// a stale docs table; without it, rewrite the docs table.
pub fn run(root: &Path, check: bool) -> Result<String> {
    let table: Table = toml::from_str(
        &std::fs::read_to_string(root.join("crates/xtask/layers.toml"))
            .context("reading crates/xtask/layers.toml")?,
    )
    .context("parsing crates/xtask/layers.toml")?;
    let files = read_tree(&root.join("crates/cudnnlog/src"))?;
    let plan = measure(&files);
    let findings = judge(&plan, &table)?;
    let mut out = render(&plan, &findings);
    let doc_path = root.join("docs/architecture.md");
    let doc = std::fs::read_to_string(&doc_path)?;
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        bail!("docs/architecture.md has no {BEGIN} … {END} markers");
    };
    let open_end = doc[b..].find("-->").map_or(b, |p| b + p + 3);
    let fresh = format!(
        "{}\n{}{}",
        &doc[..open_end],
        render_table(&table)?,
        &doc[e..]
    );
    if check {
        if fresh != doc {
            bail!("{out}docs/architecture.md's layer table is stale: run `cargo xtask layers`");
        }
        if !findings.ok() {
            bail!("{out}the floor plan does not hold (crates/xtask/layers.toml)");
        }
    } else if fresh != doc {
        std::fs::write(&doc_path, fresh)?;
        out.push_str("wrote docs/architecture.md\n");
    }
    Ok(out)
}
