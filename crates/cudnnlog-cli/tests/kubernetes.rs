//! `cudnnlog run` in a Kubernetes container: the termination message
//! (`--termination-log`) and exit codes a `podFailurePolicy` can match.
#![cfg(unix)]

mod common;

use common::{cudnnlog, Scratch};

const OOM: &str = "fixtures/real/h200-torch-oom-amp-train.log";

#[test]
fn the_termination_log_holds_the_diagnosis_in_one_line() {
    let s = Scratch::new("k8s-term");
    let term = format!("{}/termination-log", s.path());
    // Stale content from an earlier container start is replaced.
    std::fs::write(&term, "old\nmessage\n").unwrap();
    let script = format!("cat {OOM}; exit 1");
    let out = cudnnlog(
        &["run", "--termination-log", &term, "--", "sh", "-c", &script],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&term).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.ends_with('\n'));
    assert!(text.len() <= 4096);
    assert!(
        text.starts_with(
            "failed (the command exited with status 1): cuda.oom — GPU out of memory; action: stop (the allocator fragments the same way on a rerun unless its settings or the shapes change); at line 29, step 3"
        ),
        "{text}"
    );
    assert!(text.contains("; fix: "), "{text}");
}

#[test]
fn a_clean_run_and_a_missing_command_are_said_too() {
    let s = Scratch::new("k8s-clean");
    let term = format!("{}/termination-log", s.path());
    let out = cudnnlog(
        &[
            "run",
            "--termination-log",
            &term,
            "--",
            "echo",
            "epoch 1 loss 0.3",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&term).unwrap(),
        "clean (the command exited with status 0): no finding\n"
    );
    let out = cudnnlog(
        &[
            "run",
            "--termination-log",
            &term,
            "--",
            "no-such-command-xyz",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        std::fs::read_to_string(&term).unwrap(),
        "failed (status 127): no-such-command-xyz: command not found\n"
    );
}

#[test]
fn an_unwritable_termination_log_fails_before_the_job_runs() {
    let s = Scratch::new("k8s-unwritable");
    let marker = format!("{}/ran", s.path());
    let term = format!("{}/no/such/dir/termination-log", s.path());
    let out = cudnnlog(
        &["run", "--termination-log", &term, "--", "touch", &marker],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("cannot write the termination log"), "{err}");
    assert!(!std::path::Path::new(&marker).exists());
}

#[test]
fn the_exit_code_map_is_printed_and_keeps_its_codes_for_verdicts() {
    let out = cudnnlog(&["run", "--exit-code-map"], None);
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("retry         75"), "{table}");
    assert!(table.contains("stop          78"), "{table}");
    // Without a command and without the map, `run` is a usage error.
    assert_eq!(cudnnlog(&["run"], None).status.code(), Some(2));
    let map = |script: &str| {
        let out = cudnnlog(&["run", "--exit-code-map", "--", "sh", "-c", script], None);
        out.status.code()
    };
    // No finding: the command's own status, unless it is one of the map's.
    assert_eq!(map("echo step 1; exit 3"), Some(3));
    assert_eq!(map("echo step 1; exit 75"), Some(1));
    assert_eq!(map("echo step 1; exit 78"), Some(1));
    assert_eq!(map("echo step 1"), Some(0));
    // Without the map a command's 75 is its own.
    let out = cudnnlog(&["run", "--", "sh", "-c", "exit 75"], None);
    assert_eq!(out.status.code(), Some(75));
}

/// A failed command's status says what to do: a GPU fault of the node is
/// worth a retry (75), a bug in the code is not (78); the termination
/// message says the action and why.
#[test]
fn a_failure_exits_with_its_actions_code() {
    let s = Scratch::new("k8s-map");
    let term = format!("{}/termination-log", s.path());
    let run = |log: &str, code: u8| {
        let script = format!("cat {log}; exit {code}");
        let args = ["run", "--exit-code-map", "--termination-log", &term];
        let out = cudnnlog(&[&args[..], &["--", "sh", "-c", &script]].concat(), None);
        let text = std::fs::read_to_string(&term).unwrap();
        (
            out.status.code(),
            text,
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let ecc = "fixtures/wild/cases/032-ddp-ecc-then-nccl-watchdog/log.txt";
    let (code, text, err) = run(ecc, 1);
    assert_eq!(code, Some(75), "{err}");
    assert!(text.contains(": cuda.ecc_xid — "), "{text}");
    assert!(
        text.contains("; action: retry (a GPU fault belongs to the node"),
        "{text}"
    );
    assert!(
        err.contains("cudnnlog: action retry: exit status 75"),
        "{err}"
    );
    let (code, text, _) = run("fixtures/real/h200-torch-device-assert.log", 1);
    assert_eq!(code, Some(78));
    assert!(text.contains("; action: stop ("), "{text}");
    // A job killed by a signal is mapped too; one that succeeded is not.
    assert_eq!(run(ecc, 137).0, Some(75));
    assert_eq!(run(ecc, 0).0, Some(0));
    // Without the map, the command's own status.
    let script = format!("cat {ecc}; exit 1");
    let out = cudnnlog(&["run", "--", "sh", "-c", &script], None);
    assert_eq!(out.status.code(), Some(1));
}
