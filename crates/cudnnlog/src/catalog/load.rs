//! Assembling a catalog from its files: each file by its name
//! (`classes.toml`, `causes.toml`, `diagnosis.toml`, …, else one pattern),
//! then every id one file names checked against the others. User
//! directories are read here too, within the limits below.

use super::validate::{
    compile, lazy_regex, validate_fingerprint, validate_probe, validate_release, validate_table,
};
use crate::catalog::bad;
use crate::catalog::file_stem;
use crate::catalog::toml_error;
use crate::catalog::Cause;
use crate::catalog::CausesFile;
use crate::catalog::Class;
use crate::catalog::ClassesFile;
use crate::catalog::FragmentsFile;
use crate::catalog::PatternFile;
use crate::catalog::Probe;
use crate::catalog::ProbesFile;
use crate::catalog::MAX_FILE_BYTES;
use crate::Catalog;
use crate::Error;
use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;

// Limits on what user catalogs (the directories of one
// `CatalogBuilder::build`, all of them together, or the files given to
// `Catalog::from_files`) may hold. A user catalog is untrusted input: a
// file of 50,000 anchors, or 10,000 small pattern files, must be refused,
// not take the machine's memory. Over a limit the whole load fails with an
// `Error::Catalog` naming the directory or file and the limit; nothing is
// loaded in part. The built-in catalog is not counted: it holds about 300
// files and patterns, 1,100 anchors, 400 regexes and 1.5 MB, and each limit
// is several times that. Each file also has at most `MAX_FILE_BYTES`
// (1 MiB). Documented in `docs/catalog-format.md` ("Limits on user
// directories").

/// The `*.toml` files under the user directories.
const MAX_USER_FILES: usize = 2_000;
/// The bytes of those files.
const MAX_USER_BYTES: u64 = 16 << 20;
/// The entries matched against logs: patterns, environment probes, build
/// fingerprints, culprit evidence and diagnosis rules.
const MAX_USER_PATTERNS: usize = 5_000;
/// The anchors of those entries: the literals the scanner looks for.
const MAX_USER_ANCHORS: usize = 20_000;
/// The regexes compiled: each entry's, a pattern's facts, the fragments.
/// Each compiled regex costs memory (a few KiB at least) whatever its size.
const MAX_USER_REGEXES: usize = 10_000;
/// The bytes of the patterns' regexes and facts once their `{{fragment}}`
/// references are expanded: a short regex naming a long fragment many
/// times would otherwise expand to gigabytes.
const MAX_USER_REGEX_BYTES: usize = 16 << 20;

/// What the user files of one load have added so far, against the limits.
#[derive(Default)]
struct Budget {
    patterns: usize,
    anchors: usize,
    regexes: usize,
    regex_bytes: usize,
}

impl Budget {
    /// Adds what `file` brings; an error when a total passes its limit.
    fn charge(
        &mut self,
        file: &str,
        patterns: usize,
        anchors: usize,
        regexes: usize,
        regex_bytes: usize,
    ) -> Result<(), Error> {
        self.patterns += patterns;
        self.anchors += anchors;
        self.regexes += regexes;
        self.regex_bytes += regex_bytes;
        let totals = [
            (
                self.patterns,
                MAX_USER_PATTERNS,
                "patterns (with probes, fingerprints and rules)",
            ),
            (self.anchors, MAX_USER_ANCHORS, "anchors"),
            (
                self.regexes,
                MAX_USER_REGEXES,
                "regexes (with facts and fragments)",
            ),
            (
                self.regex_bytes,
                MAX_USER_REGEX_BYTES,
                "bytes of regexes with their fragments expanded",
            ),
        ];
        for (n, max, what) in totals {
            if n > max {
                return Err(bad(
                    file,
                    "(file)",
                    format!(
                        "with this file the user catalog has {n} {what}; \
                         it may have at most {max} in all"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Reads the `*.toml` files under the user directories, each directory's in
/// path order. A symlink is followed, to a file or a directory; a directory
/// reached twice (a link to a parent) is read once. Only regular files are
/// read, and never more than `MAX_FILE_BYTES` of one, whatever size it
/// claims: a FIFO would block the load forever, `/dev/zero` never ends.
pub(super) fn read_user_dirs(
    dirs: &[PathBuf],
) -> Result<Vec<(String, Cow<'static, str>, bool)>, Error> {
    let mut files = Vec::new();
    let mut found = 0;
    let mut bytes = 0;
    for dir in dirs {
        let mut paths = Vec::new();
        walk(dir, dir, &mut HashSet::new(), &mut found, &mut paths)?;
        paths.sort();
        for p in paths {
            let name = p.display().to_string();
            let text = read_user_file(&p, &name, &mut bytes)?;
            files.push((name, text.into(), false));
        }
    }
    Ok(files)
}

/// Collects the `*.toml` files under `dir` (given as `root`) into `out`,
/// counting them in `found` across the directories of a load.
fn walk(
    root: &Path,
    dir: &Path,
    seen: &mut HashSet<PathBuf>,
    found: &mut usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), Error> {
    let io = |e| Error::Io {
        path: dir.display().to_string(),
        source: e,
    };
    // Two symlinks to a parent would make the walk exponential.
    if !seen.insert(std::fs::canonicalize(dir).map_err(io)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        // Through symlinks, as the file is read; `stat` opens nothing, so
        // it cannot block on a FIFO.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => walk(root, &path, seen, found, out)?,
            // Anything else named `*.toml` is read, or refused, as a file.
            _ if path.extension().is_some_and(|e| e == "toml") => {
                *found += 1;
                if *found > MAX_USER_FILES {
                    return Err(bad(
                        &root.display().to_string(),
                        "(file)",
                        format!(
                            "more than {MAX_USER_FILES} catalog files (`*.toml`); \
                             a user catalog may have at most {MAX_USER_FILES} in all"
                        ),
                    ));
                }
                out.push(path);
            }
            _ => {}
        }
    }
    Ok(())
}

/// One user file's text: a regular file of at most `MAX_FILE_BYTES`, the
/// user files' bytes (`total`) staying within `MAX_USER_BYTES`.
fn read_user_file(path: &Path, name: &str, total: &mut u64) -> Result<String, Error> {
    let io = |e| Error::Io {
        path: name.to_string(),
        source: e,
    };
    let too_big = |len: String| {
        bad(
            name,
            "(file)",
            format!("{len}; a catalog file may have at most {MAX_FILE_BYTES} bytes"),
        )
    };
    let too_many = |sum: u64| {
        bad(
            name,
            "(file)",
            format!(
                "with this file the user catalog has {sum} bytes; \
                 it may have at most {MAX_USER_BYTES} in all"
            ),
        )
    };
    // Checked before opening: opening a FIFO blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(name, &meta.file_type()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(format!("{} bytes", meta.len())));
    }
    if *total + meta.len() > MAX_USER_BYTES {
        return Err(too_many(*total + meta.len()));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    // The file opened may not be the one looked at.
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(name, &meta.file_type()));
    }
    // A size is only a claim (a file of /proc says 0, a file may grow):
    // one byte past the limit is enough to refuse it.
    let mut buf = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(io)?;
    let len = buf.len() as u64;
    if len > MAX_FILE_BYTES {
        return Err(too_big(format!(
            "more than {MAX_FILE_BYTES} bytes read (its size says {})",
            meta.len()
        )));
    }
    *total += len;
    if *total > MAX_USER_BYTES {
        return Err(too_many(*total));
    }
    String::from_utf8(buf).map_err(|_| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

fn not_regular(name: &str, t: &std::fs::FileType) -> Error {
    let mut what = if t.is_dir() { "a directory" } else { "" };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            what = "a fifo";
        } else if t.is_socket() {
            what = "a socket";
        } else if t.is_char_device() || t.is_block_device() {
            what = "a device";
        }
    }
    let what = if what.is_empty() {
        String::new()
    } else {
        format!("{what}, ")
    };
    bad(
        name,
        "(file)",
        format!("{what}not a regular file: a catalog file must be a regular file"),
    )
}

/// The length of `regex` once `Fragments::expand` has replaced each
/// `{{name}}` by `(?:fragment)`, the fragments' lengths by name: reckoned
/// before expanding, which could take gigabytes.
fn expanded_len(regex: &str, fragments: &HashMap<String, usize>) -> usize {
    let mut len = 0;
    let mut rest = regex;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        let Some(end) = after.find("}}") else {
            break;
        };
        len += at + fragments.get(&after[..end]).map_or(0, |l| l + 4);
        rest = &after[end + 2..];
    }
    len + rest.len()
}

impl Catalog {
    /// Builds a catalog from (name, contents) pairs, validating everything
    /// and compiling every regex.
    ///
    /// # Errors
    ///
    /// [`Error::Catalog`], naming the file and the field, when a file is
    /// malformed or inconsistent.
    ///
    /// ```
    /// use cudnnlog::{Catalog, Error};
    /// let files = vec![("patterns/x.toml".to_string(), "id = \"x\"\n".to_string())];
    /// let err = Catalog::from_files(files).unwrap_err();
    /// assert!(matches!(err, Error::Catalog { ref file, .. } if file == "patterns/x.toml"));
    /// ```
    pub fn from_files(files: Vec<(String, String)>) -> Result<Catalog, Error> {
        Catalog::assemble(
            files
                .into_iter()
                .map(|(n, t)| (n, t.into(), false))
                .collect(),
        )
    }

    /// Builds a catalog from (name, contents, built-in) triples. A built-in
    /// file is the JSON form `build.rs` made of a `patterns/` file (it
    /// parses faster than TOML), already checked by the test suite: its
    /// regexes compile on first use.
    pub(super) fn assemble(
        files: Vec<(String, Cow<'static, str>, bool)>,
    ) -> Result<Catalog, Error> {
        let mut classes: Vec<Class> = Vec::new();
        let mut warning_order: Option<(String, Vec<String>)> = None;
        let mut class_files: std::collections::HashMap<String, String> = Default::default();
        let mut causes: Vec<Cause> = Vec::new();
        let mut fragments = crate::catalog::fragments::Fragments::default();
        let mut statuses: Vec<(String, crate::catalog::statuses::Enum)> = Vec::new();
        let mut evidence: Vec<crate::catalog::culprit::EvidenceRule> = Vec::new();
        let mut knowledge: Vec<(String, crate::catalog::knowledge::RuleEntry, bool)> = Vec::new();
        let mut frameworks: Vec<crate::catalog::knowledge::Framework> = Vec::new();
        let mut signals = crate::catalog::knowledge::Signals::default();
        let mut raw: Vec<(String, PatternFile, bool)> = Vec::new();
        let mut probes: Vec<Probe> = Vec::new();
        let mut releases: Vec<crate::catalog::fingerprints::Release> = Vec::new();
        let mut compat = crate::catalog::compat::Compat::default();
        let mut actions = crate::catalog::actions::Actions::default();
        // What the user files add, against the limits; the fragments'
        // lengths, for a pattern's regex's length once expanded.
        let mut budget = Budget::default();
        let mut fragment_lens: HashMap<String, usize> = HashMap::new();
        for (name, text, lazy) in &files {
            let lazy = *lazy;
            // Counted before anything is compiled.
            let mut charge = |patterns, anchors, regexes| match lazy {
                true => Ok(()),
                false => budget.charge(name, patterns, anchors, regexes, 0),
            };
            match file_stem(name) {
                "environment" => {
                    let f: ProbesFile = de(name, text, lazy)?;
                    let anchors = f.probe.iter().map(|p| p.anchors.len()).sum();
                    charge(f.probe.len(), anchors, f.probe.len())?;
                    for p in f.probe {
                        let p = validate_probe(name, p, lazy)?;
                        probes.retain(|old| old.id != p.id);
                        probes.push(p);
                    }
                }
                "fingerprints" => {
                    let f: crate::catalog::fingerprints::FingerprintsFile = de(name, text, lazy)?;
                    let anchors = f.fingerprint.iter().map(|p| p.anchors.len()).sum();
                    charge(f.fingerprint.len(), anchors, f.fingerprint.len())?;
                    for fp in f.fingerprint {
                        let p = validate_fingerprint(name, fp, lazy)?;
                        probes.retain(|old| old.id != p.id);
                        probes.push(p);
                    }
                    for r in f.release {
                        validate_release(name, &r)?;
                        releases.retain(|old| {
                            (&old.framework, &old.version) != (&r.framework, &r.version)
                        });
                        releases.push(r);
                    }
                }
                "culprit" => {
                    let f: crate::catalog::culprit::EvidenceFile = de(name, text, lazy)?;
                    charge(f.evidence.len(), f.evidence.len(), f.evidence.len())?;
                    for e in f.evidence {
                        let regex = lazy_regex(name, "evidence.regex", &e.regex, lazy)?;
                        if e.anchor.is_empty() {
                            return Err(bad(name, "evidence.anchor", "an anchor is needed"));
                        }
                        evidence.retain(|old| old.id != e.id);
                        evidence.push(crate::catalog::culprit::EvidenceRule {
                            id: e.id,
                            kind: e.kind,
                            regex,
                            lines: e.lines.min(64),
                            anchor: e.anchor,
                            reason: e.reason,
                            examples: e.examples,
                        });
                    }
                }
                "diagnosis" => {
                    let f: crate::catalog::knowledge::KnowledgeFile = de(name, text, lazy)?;
                    charge(f.rule.len(), 0, f.rule.len())?;
                    knowledge.extend(f.rule.into_iter().map(|r| (name.clone(), r, lazy)));
                    for fw in f.framework {
                        if fw.markers.iter().any(String::is_empty) {
                            return Err(bad(name, "framework.markers", "an empty marker"));
                        }
                        frameworks.retain(|old| old.id != fw.id);
                        frameworks.push(fw);
                    }
                    if let Some(sf) = f.signals {
                        signals.facts = sf.facts;
                    }
                    for sig in f.signal {
                        if sig
                            .words
                            .iter()
                            .any(|w| w.is_empty() || w.to_lowercase() != *w)
                        {
                            return Err(bad(
                                name,
                                "signal.words",
                                format!("{}: words are non-empty and lower case", sig.name),
                            ));
                        }
                        signals.signals.retain(|old| old.name != sig.name);
                        signals.signals.push(sig);
                    }
                }
                "statuses" => {
                    let f: crate::catalog::statuses::StatusesFile = de(name, text, lazy)?;
                    for e in f.enums {
                        statuses.retain(|(_, old)| old.name != e.name);
                        statuses.push((name.clone(), e));
                    }
                }
                "fragments" => {
                    let f: FragmentsFile = de(name, text, lazy)?;
                    charge(0, 0, f.fragments.len())?;
                    for (k, v) in &f.fragments {
                        fragment_lens.insert(k.clone(), v.len());
                        if !lazy {
                            compile(name, &format!("fragments.{k}"), v)?;
                        }
                        fragments.insert(k, v);
                    }
                }
                "actions" => actions.extend(de(name, text, lazy)?),
                "compat" => {
                    let c: crate::catalog::compat::Compat = de(name, text, lazy)?;
                    compat.extend(c);
                }
                "classes" => {
                    let f: ClassesFile = de(name, text, lazy)?;
                    for c in f.class {
                        if c.id.is_empty() || !c.id.contains('.') {
                            return Err(bad(
                                name,
                                "class.id",
                                format!("class id {:?} must look like `family.name`", c.id),
                            ));
                        }
                        classes.retain(|old| old.id != c.id);
                        class_files.insert(c.id.clone(), name.clone());
                        classes.push(c);
                    }
                    if let Some(order) = f.warning_order {
                        warning_order = Some((name.clone(), order));
                    }
                }
                "causes" => {
                    let f: CausesFile = de(name, text, lazy)?;
                    for c in f.cause {
                        if c.remediations.is_empty() {
                            return Err(bad(
                                name,
                                "cause.remediations",
                                format!("cause {:?} has no remediation", c.id),
                            ));
                        }
                        causes.retain(|old| old.id != c.id);
                        causes.push(c);
                    }
                }
                _ => {
                    let p: PatternFile = de(name, text, lazy)?;
                    charge(1, p.anchors.len(), 1 + p.facts.len())?;
                    // A later file with the same id (a user catalog) replaces an earlier one.
                    raw.retain(|(_, old, _)| old.id != p.id);
                    raw.push((name.clone(), p, lazy));
                }
            }
        }
        let class_ids: HashSet<&str> = classes.iter().map(|c| c.id.as_str()).collect();
        let cause_ids: HashSet<&str> = causes.iter().map(|c| c.id.as_str()).collect();
        let (order_file, warning_order) = warning_order.unwrap_or_default();
        for id in &warning_order {
            if !class_ids.contains(id.as_str()) {
                return Err(bad(
                    &order_file,
                    "warning_order",
                    format!("unknown class id {id:?}"),
                ));
            }
        }
        for c in &classes {
            for id in &c.implies {
                if !class_ids.contains(id.as_str()) {
                    return Err(bad(
                        &class_files[&c.id],
                        "class.implies",
                        format!("class {:?} implies unknown class id {id:?}", c.id),
                    ));
                }
            }
        }
        let families: HashSet<&str> = classes
            .iter()
            .filter_map(|c| c.id.split('.').next())
            .collect();
        for c in &classes {
            if let Some(f) = c
                .setup
                .as_deref()
                .filter(|f| *f != "gpu" && !families.contains(f))
            {
                return Err(bad(
                    &class_files[&c.id],
                    "class.setup",
                    format!("class {:?}: unknown class family {f:?} (or \"gpu\")", c.id),
                ));
            }
        }
        let mut rules: Vec<crate::catalog::knowledge::KnowledgeRule> = Vec::new();
        for (file, r, lazy) in knowledge {
            let r = r
                .validate(
                    &|c| class_ids.contains(c),
                    &|f| families.contains(f),
                    &|c| cause_ids.contains(c),
                    lazy,
                )
                .map_err(|(field, m)| bad(&file, &field, m))?;
            rules.retain(|old| old.id != r.id);
            rules.push(r);
        }
        for c in &causes {
            if let Some(f) = c
                .remediations_for
                .iter()
                .find(|f| !families.contains(f.as_str()))
            {
                return Err(bad(
                    "causes.toml",
                    "cause.remediations_for",
                    format!("cause {:?}: unknown class family {f:?}", c.id),
                ));
            }
        }
        for (file, e) in &statuses {
            crate::catalog::statuses::validate(e, &|c| class_ids.contains(c))
                .map_err(|m| bad(file, "enum", m))?;
        }
        let statuses: Vec<crate::catalog::statuses::Enum> =
            statuses.into_iter().map(|(_, e)| e).collect();
        let mut patterns = Vec::with_capacity(raw.len());
        for (file, p, lazy) in raw {
            if !lazy {
                let len = |r: &String| expanded_len(r, &fragment_lens);
                let bytes = len(&p.regex) + p.facts.iter().map(len).sum::<usize>();
                budget.charge(&file, 0, 0, 0, bytes)?;
            }
            let p = super::validate::validate(&file, p, &class_ids, &cause_ids, &fragments, lazy)?;
            validate_table(&file, &p, &statuses, lazy)?;
            patterns.push(p);
        }
        let pattern_ids: HashSet<&str> = patterns.iter().map(|p| p.id.as_str()).collect();
        if let Some((kind, id)) = actions.unknown(
            &|c| class_ids.contains(c),
            &|c| cause_ids.contains(c),
            &|p| pattern_ids.contains(p),
        ) {
            let m = format!("{kind} {id:?} is not in the catalog");
            return Err(bad("actions.toml", kind, m));
        }
        if let Some(id) = actions.without_reason() {
            return Err(bad("actions.toml", "because", format!("{id:?}: say why")));
        }
        if let Some(id) = actions.bad_condition() {
            let m = format!("{id:?}: `fact` and `values` go together, on pattern rules only");
            return Err(bad("actions.toml", "fact", m));
        }
        Ok(Catalog {
            classes,
            statuses,
            evidence,
            knowledge: rules,
            frameworks,
            signals,
            warning_order,
            causes,
            patterns,
            probes,
            releases: {
                releases.sort_by(|a, b| {
                    (
                        a.framework.as_str(),
                        crate::catalog::fingerprints::parse_date(&a.date),
                    )
                        .cmp(&(
                            b.framework.as_str(),
                            crate::catalog::fingerprints::parse_date(&b.date),
                        ))
                });
                releases
            },
            compat,
            actions,
        })
    }
}

/// One catalog file's contents: TOML, or for a built-in file its JSON form.
fn de<T: serde::de::DeserializeOwned>(name: &str, text: &str, json: bool) -> Result<T, Error> {
    if json {
        serde_json::from_str(text).map_err(|e| bad(name, "(file)", e.to_string()))
    } else {
        toml::from_str(text).map_err(|e| toml_error(name, text, e))
    }
}
