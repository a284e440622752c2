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

/// Rank 2 runs out of memory at 09:01:10; the other ranks' watchdogs fire
/// at 09:11 (c10's clock, unpadded month-day for June).
fn oom_then_timeouts(s: &Scratch) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for r in [0, 1, 3] {
        files.push(s.write(
            &format!("job/rank{r}.log"),
            format!(
                "2024-06-10 09:01:10,00{r} INFO step 100 loss 3.41\n\
                 [E610 09:11:12.60000{r} ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=412, OpType=ALLREDUCE, NumelIn=25557032, NumelOut=25557032, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n"
            )
            .as_bytes(),
        ));
    }
    files.insert(
        2,
        s.write(
            "job/rank2.log",
            b"2024-06-10 09:01:10,002 INFO step 100 loss 3.42\n\
              Traceback (most recent call last):\n  File \"/workspace/train.py\", line 121, in main\n    loss = model(batch).loss\n\
              torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU 2 has a total capacity of 79.15 GiB of which 3.21 GiB is free. Including non-PyTorch memory, this process has 75.92 GiB memory in use. Of the allocated memory 70.13 GiB is allocated by PyTorch, and 4.90 GiB is reserved by PyTorch but unallocated.\n",
        ),
    );
    files
}

#[test]
fn a_ranks_own_failure_before_the_others_timeouts_is_the_primary() {
    let s = Scratch::new("oom-then-timeouts");
    let files = oom_then_timeouts(&s);
    let dir = s.0.join("job");
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut with_job = vec!["scan", "--job", "--format", "json"];
    with_job.extend(names.iter().map(String::as_str));
    for out in [
        cudnnlog(&["scan", "--format", "json", dir.to_str().unwrap()], None),
        cudnnlog(&with_job, None),
    ] {
        let r = json(&out);
        assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
        let oom = r.findings.iter().find(|f| f.class == "cuda.oom").unwrap();
        let culprit = oom.culprit.as_ref().expect("the rank that failed first");
        assert_eq!(culprit.ranks, [2]);
        assert_eq!(
            culprit.reason,
            "rank 2 failed first (GPU out of memory, line 5, 09:01:10); ranks 0, 1, 3 failed 10 min later waiting for it"
        );
        let timeout = r
            .findings
            .iter()
            .find(|f| f.class == "nccl.timeout")
            .unwrap();
        assert_eq!(timeout.fallout_of.as_deref(), Some("cuda.oom"));
        // The watchdog lines keep their own time (c10's `E610`), ten
        // minutes after the OOM.
        assert_eq!(
            timeout.first.timestamp.as_deref(),
            Some("2024-06-10T09:11:12.600000")
        );
        // Rank files are ranks of one run: nothing to compare across runs.
        assert!(r.cross_run.is_empty(), "{:?}", r.cross_run);
        assert_eq!(
            r.sources.iter().map(|s| s.rank).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(2), Some(3)]
        );
    }
    // The files concatenated in rank order: the clocks still put rank 2 first.
    let mut all = Vec::new();
    for f in &files {
        all.extend(std::fs::read(f).unwrap());
    }
    let cat = s.write("all.log", &all);
    let r = json(&cudnnlog(
        &["scan", "--format", "json", cat.to_str().unwrap()],
        None,
    ));
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    // The headline names the rank.
    let out = cudnnlog(&["scan", dir.to_str().unwrap()], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("culprit: rank 2: rank 2 failed first"),
        "{text}"
    );
}

#[test]
fn a_rank_only_torchrun_reports_dead_is_the_culprit_not_fallout() {
    let log = "[rank2]: 2024-06-10 09:01:10,002 INFO step 100 loss 3.420\n\
[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.20.5\n\
[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n\
E0610 09:01:13.000000 140231 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -11) local_rank: 2 (pid: 140302) of binary: /usr/bin/python3\n\
Root Cause (first observed failure):\n\
[0]:\n\
  time      : 2024-06-10_09:01:12\n\
  host      : node07\n\
  rank      : 2 (local_rank: 2)\n\
  exitcode  : -11 (pid: 140302)\n\
  error_file: <N/A>\n\
  traceback : Signal 11 (SIGSEGV) received by PID 140302\n";
    let r = json(&cudnnlog(
        &["scan", "--format", "json", "-"],
        Some(log.as_bytes()),
    ));
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let segv = r
        .findings
        .iter()
        .find(|f| f.class == "proc.segfault")
        .unwrap();
    assert_eq!(segv.caused_by, None);
    let c = segv.culprit.as_ref().unwrap();
    assert_eq!(c.ranks, [2]);
    assert_eq!(c.basis, cudnnlog::report::Basis::Launcher);
    assert!(!c.reason.contains("reported no failure"), "{}", c.reason);
    let nccl = r.findings.iter().find(|f| f.class == "nccl.error").unwrap();
    assert_eq!(nccl.fallout_of.as_deref(), Some("proc.segfault"));
    // The fix is not the straggler's: nothing timed out.
    assert!(
        segv.remediations
            .iter()
            .all(|m| !m.contains("sequence number")),
        "{:?}",
        segv.remediations
    );
}
