//! Hostile and broken input over the real binary: each case ends with exit
//! 0 or 1 and a correct (partial) result, or exit 2 and one line on
//! standard error — never a panic (exit 101), a signal or a hang.

mod common;

use common::{cudnnlog, json, mkfifo};
use std::path::PathBuf;
use std::process::Output;

const OOM_LINE: &[u8] = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cudnnlog-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Exit 0 or 1 (no finding, or findings), no panic, no signal.
fn survived(out: &Output) -> i32 {
    let code = ended(out);
    assert!(
        matches!(code, 0 | 1),
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    code
}

/// Exit 0 or 1, or 2 with one line on standard error (the input could not
/// be read to its end); no panic, no signal.
fn survived_or_refused(out: &Output) -> i32 {
    let code = ended(out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match code {
        0 | 1 => {}
        2 => assert!(
            stderr.starts_with("cudnnlog: ") && stderr.lines().count() == 1,
            "{stderr}"
        ),
        _ => panic!("exit {code}: {stderr}"),
    }
    code
}

/// The exit status of a process that was not killed by a signal.
fn ended(out: &Output) -> i32 {
    out.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {:?}", out.status))
}

/// Exit 2 with exactly one line on standard error naming the problem.
fn refused(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "{:?}", out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
}

fn scan_file(name: &str, bytes: &[u8]) -> Output {
    let path = scratch(name);
    std::fs::write(&path, bytes).unwrap();
    let out = cudnnlog(&["scan", "--format", "json", path.to_str().unwrap()], None);
    let _ = std::fs::remove_file(&path);
    out
}

fn classes(out: &Output) -> Vec<String> {
    json(out).findings.into_iter().map(|f| f.class).collect()
}

/// `n` xorshift bytes: every byte value, no structure.
fn random_bytes(n: usize) -> Vec<u8> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn random_binary_is_survived() {
    let bytes = random_bytes(4 << 20);
    let out = scan_file("random.bin", &bytes);
    survived(&out);
    json(&out);
}

#[test]
fn nul_runs_and_invalid_utf8_around_an_error_still_find_it() {
    let mut bytes = vec![0u8; 1 << 20];
    bytes.extend_from_slice(b"\xff\xfe\xfd broken \xc3\x28 utf-8\n");
    bytes.extend_from_slice(OOM_LINE);
    bytes.extend_from_slice(&[0u8; 4096]);
    bytes.extend_from_slice(b"\n\x80\x81\n");
    let out = scan_file("nul.log", &bytes);
    assert_eq!(survived(&out), 1);
    assert_eq!(classes(&out), ["cuda.oom"]);
}

#[test]
fn an_empty_file_is_clean() {
    let out = scan_file("empty.log", b"");
    assert_eq!(survived(&out), 0);
    let r = json(&out);
    assert_eq!((r.sources[0].bytes, r.sources[0].lines), (0, 0));
}

#[test]
fn a_giant_line_without_newline_then_an_error() {
    // 200 MB on one line, then a real failure: found.
    let mut bytes = vec![b'x'; 200 << 20];
    bytes.push(b'\n');
    bytes.extend_from_slice(OOM_LINE);
    let out = scan_file("giant.log", &bytes);
    assert_eq!(survived(&out), 1);
    assert_eq!(classes(&out), ["cuda.oom"]);
    // The same through a pipe, where memory is bounded by the block size.
    let out = cudnnlog(&["scan", "--format", "json", "-"], Some(&bytes));
    assert_eq!(survived(&out), 1);
    assert_eq!(classes(&out), ["cuda.oom"]);
}

#[test]
fn a_traceback_that_never_ends() {
    let mut log = b"Traceback (most recent call last):\n".to_vec();
    for i in 0..300_000 {
        log.extend_from_slice(
            format!("  File \"/home/user/train/x.py\", line {i}, in f\n").as_bytes(),
        );
    }
    let out = scan_file("endless.log", &log);
    survived(&out);
}

#[test]
fn a_million_line_burst_is_one_finding() {
    let warning = b"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,\n";
    let mut log = Vec::with_capacity(warning.len() * 500_000);
    for _ in 0..500_000 {
        log.extend_from_slice(warning);
    }
    let out = scan_file("burst.log", &log);
    assert_eq!(survived(&out), 0);
    let r = json(&out);
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].count, 500_000);
    assert_eq!(r.sources[0].lines, 1_000_000);
}

#[test]
fn deeply_chained_exceptions() {
    let mut log = Vec::new();
    for i in 0..5000 {
        log.extend_from_slice(format!("Traceback (most recent call last):\n  File \"a.py\", line {i}, in f\nValueError: level {i}\n\nDuring handling of the above exception, another exception occurred:\n\n").as_bytes());
    }
    log.extend_from_slice(b"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'end'\n");
    let out = scan_file("chained.log", &log);
    assert_eq!(survived(&out), 1);
}

#[test]
fn a_symlink_loop_and_a_missing_path_are_refused_in_one_line() {
    let a = scratch("loop-a");
    let b = scratch("loop-b");
    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    refused(&cudnnlog(&["scan", a.to_str().unwrap()], None), "loop-a");
    refused(
        &cudnnlog(&["scan", "/nonexistent/dir/train.log"], None),
        "/nonexistent/dir/train.log",
    );
    // A path through a regular file.
    refused(
        &cudnnlog(&["scan", "README.md/train.log"], None),
        "README.md/train.log",
    );
}

#[test]
fn a_device_is_refused_and_a_fifo_is_read() {
    refused(&cudnnlog(&["scan", "/dev/zero"], None), "/dev/zero");
    let fifo = scratch("pipe.fifo");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, OOM_LINE).unwrap())
    };
    let out = cudnnlog(&["scan", "--format", "json", fifo.to_str().unwrap()], None);
    writer.join().unwrap();
    let _ = std::fs::remove_file(&fifo);
    assert_eq!(survived(&out), 1);
    assert_eq!(classes(&out), ["cuda.oom"]);
}

/// A FIFO named on the command line that no writer opens: refused in one
/// line after a bounded wait, not a hang in open(). The other inputs are
/// still scanned.
#[cfg(unix)]
#[test]
fn a_fifo_nobody_writes_is_refused_after_a_bounded_wait() {
    let fifo = scratch("lonely.fifo");
    mkfifo(&fifo);
    let log = scratch("beside-the-fifo.log");
    std::fs::write(&log, OOM_LINE).unwrap();
    let started = std::time::Instant::now();
    let out = cudnnlog(
        &[
            "scan",
            "--job",
            "--format",
            "json",
            fifo.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
        None,
    );
    let waited = started.elapsed();
    let _ = std::fs::remove_file(&fifo);
    refused(&out, "no writer opened");
    assert!(waited < std::time::Duration::from_secs(60), "{waited:?}");
    assert_eq!(classes(&out), ["cuda.oom"]);
}

/// A /proc pseudo-file claims a size of 0 and may never end
/// (`/proc/self/pagemap` describes 256 GiB): its first 16 MiB are scanned,
/// then one line says so.
#[cfg(target_os = "linux")]
#[test]
fn a_proc_pseudo_file_is_read_no_further_than_its_limit() {
    let started = std::time::Instant::now();
    let out = cudnnlog(&["scan", "--format", "json", "/proc/self/pagemap"], None);
    refused(&out, "pseudo-file, read no further than its first 16 MiB");
    assert_eq!(json(&out).sources[0].bytes, 16 << 20);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    // A small one is read whole, as a stream.
    let out = cudnnlog(&["scan", "--format", "json", "/proc/self/status"], None);
    assert_eq!(survived(&out), 0);
}

#[test]
fn a_file_truncated_while_scanned_never_kills_the_process() {
    // A file still being written (its mtime is recent) is read, not mapped:
    // shrinking it mid-scan gives a partial result, not SIGBUS.
    let path = scratch("shrinking.log");
    let mut log = Vec::new();
    for i in 0..2_000_000u32 {
        log.extend_from_slice(
            format!("2026-11-29 19:40:51,487 INFO train: step {i} loss 0.5\n").as_bytes(),
        );
    }
    std::fs::write(&path, &log).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cudnnlog"))
        .args(["scan", "--format", "json", path.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1000)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    survived_or_refused(&out);
}

#[test]
fn escape_sequences_never_reach_the_terminal_or_the_json_raw() {
    // OSC title change, OSC 8 hyperlink, CSI clear screen, BEL, C1 CSI.
    let log = b"\x1b]0;pwned\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ \x1b[2J\x9b31m torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free. \x1b]0;again\x07\x07\x7f\n";
    let table = cudnnlog(&["scan", "--color", "never", "-"], Some(log));
    assert_eq!(survived(&table), 1);
    for b in [0x1b, 0x07, 0x9b, 0x7f] {
        assert!(
            !table.stdout.contains(&b),
            "byte {b:#x} reached the terminal"
        );
    }
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(!text.contains('\u{9b}') && !text.contains('\u{7f}'));
    let js = cudnnlog(&["scan", "--format", "json", "-"], Some(log));
    let raw = String::from_utf8(js.stdout.clone()).unwrap();
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{7f}'] {
        assert!(!raw.contains(c), "{c:?} unescaped in JSON");
    }
    json(&js);
}

/// A job's log as a crash and a restart leave it: the lines before the
/// crash, a few KiB of NUL bytes (blocks the filesystem had allocated and
/// the dying writer never filled), then the restarted run's out-of-memory
/// traceback.
fn crashed_log() -> Vec<u8> {
    let mut log = b"2026-11-29 19:40:58,112 INFO train: epoch 1 step 40 loss 2.4410\n\
2026-11-29 19:40:59,870 INFO train: epoch 1 step 41 loss 2.4391\n"
        .to_vec();
    log.extend_from_slice(&[0u8; 3 * 1024]);
    log.extend_from_slice(&[0u8; 512]);
    log.extend_from_slice(
        b"2026-11-29 19:43:02,004 INFO train: resuming from checkpoint step 40\n\
Traceback (most recent call last):\n\
  File \"/home/user/train/train.py\", line 88, in <module>\n\
    loss.backward()\n\
  File \"/opt/torch/.venv/lib/python3.12/site-packages/torch/_tensor.py\", line 631, in backward\n\
    torch.autograd.backward(\n\
  File \"/opt/torch/.venv/lib/python3.12/site-packages/torch/autograd/graph.py\", line 869, in _engine_run_backward\n\
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process has 77.94 GiB memory in use. Of the allocated memory 74.10 GiB is allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but unallocated.\n",
    );
    log
}

/// A directory of two jobs, one clean and one whose log holds NUL bytes in
/// its first 8 KiB: the failed job is a verdict, as when it is named alone.
#[test]
fn a_log_with_nul_bytes_in_a_directory_is_still_scanned() {
    let s = common::Scratch::new("nul-dir");
    s.copy(
        "fixtures/real/h200-torch-healthy-train.log",
        "jobs/job-1.log",
    );
    let crashed = s.write("jobs/job-2.log", &crashed_log());
    // Also text first, then the NULs of a preallocated file at its end.
    let mut prealloc =
        std::fs::read(common::root().join("fixtures/real/h200-torch-oom-amp-train.log")).unwrap();
    prealloc.extend_from_slice(&[0u8; 6 * 1024]);
    let prealloc = s.write("jobs/job-3.log", &prealloc);
    let alone = cudnnlog(
        &["scan", "--format", "json", crashed.to_str().unwrap()],
        None,
    );
    assert_eq!(classes(&alone), ["cuda.oom"]);
    let jobs = s.0.join("jobs");
    let out = cudnnlog(&["scan", "--format", "json", jobs.to_str().unwrap()], None);
    assert_eq!(
        survived(&out),
        1,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let primaries: Vec<(String, String)> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let v = &j["verdict"];
            (
                v["path"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                v["primary"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    assert_eq!(
        primaries,
        [
            ("job-1.log".to_string(), "-".to_string()),
            ("job-2.log".to_string(), "cuda.oom".to_string()),
            ("job-3.log".to_string(), "cuda.oom".to_string()),
        ],
        "{prealloc:?}"
    );
    assert_eq!(doc["summary"]["failed"], 2);
    assert!(
        doc["summary"].get("skipped").is_none(),
        "{}",
        doc["summary"]
    );
}

/// An ELF core dump (holding a log's text in its memory) and random bytes
/// under log names are skipped, but never silently: a note names each on
/// standard error and the summary counts the skips by reason, in the fleet
/// document, its NDJSON summary and the table's and compact lines' footer;
/// one job's table says so too.
#[test]
fn a_skipped_file_is_never_silent() {
    let s = common::Scratch::new("skip-count");
    s.copy(
        "fixtures/real/h200-torch-healthy-train.log",
        "jobs/job-1.log",
    );
    s.write("jobs/job-2.log", &crashed_log());
    let mut core =
        b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x3e\x00".to_vec();
    core.extend_from_slice(&[0u8; 300]);
    core.extend_from_slice(&crashed_log());
    s.write("jobs/job-3.log", &core);
    s.write("jobs/rank-4.out", &random_bytes(64 << 10));
    s.write("jobs/notes.md", b"ERROR: see job-2\n");
    let jobs = s.0.join("jobs");
    let dir = jobs.to_str().unwrap();

    let out = cudnnlog(&["scan", "--format", "json", dir], None);
    assert_eq!(ended(&out), 1);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["jobs"], 2, "{}", doc["summary"]);
    assert_eq!(
        doc["summary"]["skipped"],
        serde_json::json!({"binary": 2, "not_a_log": 1})
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for name in ["job-3.log", "rank-4.out"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("cudnnlog: ") && l.contains(name) && l.contains("binary")),
            "{err}"
        );
    }
    let out = cudnnlog(&["scan", "--format", "ndjson", dir], None);
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    let summary: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(summary["type"], "fleet_summary");
    assert_eq!(summary["skipped"]["binary"], 2);
    for format in ["table", "compact"] {
        let out = cudnnlog(&["scan", "--format", format, "--color", "never", dir], None);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(
                "2 jobs: 1 failed, 1 clean; action: 1 stop; skipped 3 files: 2 binary, 1 not a log by name"
            ),
            "{format}: {text}"
        );
    }
    // One job and a skipped file: its table says so.
    let one = common::Scratch::new("skip-count-one");
    one.copy(
        "fixtures/real/h200-torch-healthy-train.log",
        "job/train.log",
    );
    one.write("job/train.log.1", &core);
    let dir = one.0.join("job");
    for format in ["table", "compact"] {
        let out = cudnnlog(
            &[
                "scan",
                "--format",
                format,
                "--color",
                "never",
                dir.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(ended(&out), 0);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("skipped 1 file: 1 binary"),
            "{format}: {text}"
        );
    }
}
