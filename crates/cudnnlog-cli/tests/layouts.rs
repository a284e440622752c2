//! A job is one story, however its logs are laid out: every labelled
//! multi-rank log of `fixtures/culprits.toml` that interleaves several
//! tagged ranks is also written as one file per rank (`rank3.log`), as
//! torchrun's `--log-dir` layout (`attempt_0/3/stderr.log`), and as the
//! ranks' outputs concatenated one after another; each layout must give the
//! same primary failure and the same culprit as the interleaved file.
//!
//! A launcher's own prefix (`[default3]:`, srun's `3: `, mpirun's
//! `[1,3]<stderr>:`) is what a per-rank file does not have, so it is
//! removed there; PyTorch's `[rank3]:` is the process's own output and
//! stays. Lines of no rank (the launcher's) go to a file of their own.

mod common;

use common::{cudnnlog, json, root, Scratch};
use std::collections::BTreeMap;

/// The rank a line is from, and the line as that rank's own file holds it.
fn writer(line: &str) -> Option<(u32, &str)> {
    let digits = |s: &str| -> Option<(u32, usize)> {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        (n > 0 && n <= 5)
            .then(|| (s[..n].parse().ok(), n))
            .and_then(|(r, n)| Some((r?, n)))
    };
    // torchrun --tee: `[default3]:`
    if let Some(rest) = line.strip_prefix("[default") {
        let (r, n) = digits(rest)?;
        return rest[n..].strip_prefix("]:").map(|body| (r, body));
    }
    // mpirun --tag-output: `[1,3]<stderr>:`
    if let Some(rest) = line.strip_prefix("[1,") {
        let (r, n) = digits(rest)?;
        let rest = rest[n..].strip_prefix("]<")?;
        let close = rest.find(">:")?;
        return Some((r, &rest[close + 2..]));
    }
    // PyTorch's own `[rank3]:`: kept, the process wrote it.
    if let Some(rest) = line.strip_prefix("[rank") {
        let (r, n) = digits(rest)?;
        return rest[n..].starts_with("]:").then_some((r, line));
    }
    // srun --label: `3: `
    if let Some((r, body)) =
        digits(line).and_then(|(r, n)| Some((r, line[n..].strip_prefix(": ")?)))
    {
        return Some((r, body));
    }
    // A logger named after the rank (`INFO rank2: step 3`): that rank's
    // own output, untagged.
    let at = line.find(" rank")? + 5;
    let (r, n) = digits(&line[at..])?;
    line[at + n..].starts_with(": ").then_some((r, line))
}

/// The labelled logs (files, not folders) that interleave two or more ranks.
fn interleaved_logs() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("fixtures/culprits.toml")).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    doc["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap().to_string())
        .filter(|p| root().join(p).is_file())
        .filter(|p| {
            let bytes = std::fs::read(root().join(p)).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let mut ranks: Vec<u32> = text
                .lines()
                .filter_map(|l| writer(l).map(|w| w.0))
                .collect();
            ranks.sort_unstable();
            ranks.dedup();
            ranks.len() >= 2
        })
        .collect()
}

/// Primary class and culprit ranks of a JSON report.
fn answer(out: &std::process::Output) -> (Option<String>, Option<Vec<u32>>) {
    assert!(
        out.status.code().unwrap_or(9) <= 1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(out);
    let primary = r
        .primary
        .as_deref()
        .and_then(|p| r.findings.iter().find(|f| f.class == p));
    let culprit = primary
        .and_then(|f| f.culprit.as_ref().map(|c| c.ranks.clone()))
        .or_else(|| {
            primary
                .filter(|f| f.ranks.len() == 1)
                .map(|f| f.ranks.clone())
        });
    (r.primary.clone(), culprit)
}

#[test]
fn every_layout_of_a_multi_rank_job_tells_the_same_story() {
    let logs = interleaved_logs();
    assert!(
        logs.len() >= 10,
        "{} interleaved multi-rank logs",
        logs.len()
    );
    let mut differ = Vec::new();
    for (i, path) in logs.iter().enumerate() {
        let bytes = std::fs::read(root().join(path)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let mut own: BTreeMap<u32, (String, String)> = BTreeMap::new();
        let mut launcher = String::new();
        for line in text.lines() {
            match writer(line) {
                Some((r, body)) => {
                    let (file, tagged) = own.entry(r).or_default();
                    file.push_str(body);
                    file.push('\n');
                    tagged.push_str(line);
                    tagged.push('\n');
                }
                None => {
                    launcher.push_str(line);
                    launcher.push('\n');
                }
            }
        }
        let s = Scratch::new(&format!("layouts-{i}"));
        let mut per_rank = Vec::new();
        let mut torchrun = Vec::new();
        let mut concatenated = String::new();
        for (r, (file, tagged)) in &own {
            per_rank.push(s.write(&format!("ranks/rank{r}.log"), file.as_bytes()));
            torchrun.push(s.write(&format!("run/attempt_0/{r}/stderr.log"), file.as_bytes()));
            concatenated.push_str(tagged);
        }
        concatenated.push_str(&launcher);
        let cat = s.write("all.log", concatenated.as_bytes());
        if !launcher.is_empty() {
            per_rank.push(s.write("ranks/launcher.log", launcher.as_bytes()));
            torchrun.push(s.write("run/console.log", launcher.as_bytes()));
        }
        let scan = |files: &[std::path::PathBuf]| {
            let mut args = vec!["scan", "--job", "--format", "json"];
            let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            args.extend(names.iter().map(String::as_str));
            answer(&cudnnlog(&args, None))
        };
        let want = answer(&cudnnlog(&["scan", "--format", "json", path], None));
        let layouts = [
            ("per-rank files", scan(&per_rank)),
            ("torchrun --log-dir", scan(&torchrun)),
            ("concatenation", scan(&[cat])),
        ];
        for (name, got) in layouts {
            if got != want {
                differ.push(format!("{path} as {name}: {got:?}, interleaved: {want:?}"));
            }
        }
        // A folder of rank files alone is one job without --job.
        if launcher.is_empty() {
            let dir = s.0.join("ranks");
            let got = answer(&cudnnlog(
                &["scan", "--format", "json", dir.to_str().unwrap()],
                None,
            ));
            if got != want {
                differ.push(format!(
                    "{path} as a folder: {got:?}, interleaved: {want:?}"
                ));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "layouts disagree:\n{}",
        differ.join("\n")
    );
}
