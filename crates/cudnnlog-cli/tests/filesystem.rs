//! The filesystem as an accident or an attacker shapes it: FIFOs where
//! files were, links that fan out, huge ignore files, unreadable
//! directories. Each case runs the real binary in a child process that is
//! killed past a generous limit (a hang fails the test instead of hanging
//! it) while its peak anonymous memory is polled.

mod common;

use common::{command, mkfifo, Scratch};
use std::io::Read;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

const OOM_LINE: &[u8] = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n";

/// The documented bound on anonymous memory.
const MAX_ANON_KIB: u64 = 128 << 10;

/// How a child ended.
struct Ran {
    out: Output,
    /// Peak `RssAnon` seen while it ran.
    peak_anon_kib: u64,
    /// Killed at the limit: it hung, or crawled.
    killed: bool,
}

impl Ran {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    /// Exit status, after checking the child was neither killed at the
    /// limit nor by a signal.
    fn code(&self) -> i32 {
        assert!(
            !self.killed,
            "still running at the limit: {}",
            self.stderr()
        );
        self.out
            .status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {:?}", self.out.status))
    }
}

/// `cudnnlog ARGS`, killed after `limit`, as the unprivileged `nobody` when
/// `unprivileged` and this runs as root (root reads any file).
fn run(args: &[&str], limit: Duration, unprivileged: bool) -> Ran {
    let mut cmd = command(args);
    cmd.stdin(Stdio::null());
    #[cfg(unix)]
    if unprivileged && is_root() {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let mut child = cmd.spawn().unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let mut peak = 0;
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(anon_kib(child.id()).unwrap_or(0));
        if started.elapsed() > limit {
            killed = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ran {
        out: Output {
            status,
            stdout: stdout.join().unwrap(),
            stderr: stderr.join().unwrap(),
        },
        peak_anon_kib: peak,
        killed,
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Uid:"))?.to_string();
            Some(line.split_whitespace().nth(2)? == "0")
        })
        .unwrap_or(false)
}

/// `RssAnon` of process `pid`, in KiB.
fn anon_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `cudnnlog scan --format json PATH`, killed after `limit` seconds.
fn scan_json(path: &Path, limit: u64) -> Ran {
    let args = ["scan", "--format", "json", path.to_str().unwrap()];
    run(&args, Duration::from_secs(limit), false)
}

fn classes(json: &str) -> Vec<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    doc["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|f| f["class"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `.gitignore` as a FIFO: the walk read it with a blocking open and
/// waited forever for a writer. An ignore file that is not a regular file
/// is now left unread, said in one line, and the walk goes on.
#[test]
fn an_ignore_file_that_is_a_fifo_does_not_hang_the_walk() {
    let s = Scratch::new("fs-ignore-fifo");
    s.write("logs/train.log", OOM_LINE);
    mkfifo(&s.0.join("logs/.gitignore"));
    let dir = s.0.join("logs");
    let ran = scan_json(&dir, 30);
    assert_eq!(ran.code(), 1, "{}", ran.stderr());
    assert_eq!(classes(&ran.stdout()), ["cuda.oom"]);
    assert!(
        ran.stderr().contains(".gitignore: not a regular file"),
        "{}",
        ran.stderr()
    );
}

/// Links `fan` wide, `levels` deep: `levels` directories, each but the
/// last holding `fan` links to the next, the last a log. With `inside`,
/// the linked directories are in `root` (`root/d1` … ; the links in
/// `root/top`), else beside it. Returns the log's real path.
fn fan_out(
    root: &Path,
    beside: &Path,
    levels: usize,
    fan: usize,
    inside: bool,
) -> std::path::PathBuf {
    let home = if inside { root } else { beside };
    let dir = |i: usize| home.join(format!("d{i}"));
    for i in 1..=levels {
        std::fs::create_dir_all(dir(i)).unwrap();
    }
    let log = dir(levels).join("train.log");
    std::fs::write(&log, OOM_LINE).unwrap();
    let first = if inside {
        root.join("top")
    } else {
        root.to_path_buf()
    };
    std::fs::create_dir_all(&first).unwrap();
    for level in 0..levels {
        let at = if level == 0 {
            first.clone()
        } else {
            dir(level)
        };
        for k in 0..fan {
            std::os::unix::fs::symlink(dir(level + 1), at.join(format!("l{k:02}"))).unwrap();
        }
    }
    log
}

/// Five levels of twelve links are 248,832 paths to one log: each was a
/// job of its own (past 30 s and 471 MiB). A file is now one job however
/// many paths reach it, a directory is walked once, and the path without
/// links is the one named.
#[cfg(unix)]
#[test]
fn links_that_fan_out_reach_one_file_once() {
    let s = Scratch::new("fs-fan-out");
    let inside = s.0.join("inside");
    let log = fan_out(&inside, &s.0.join("unused"), 5, 12, true);
    let outside = s.0.join("outside");
    fan_out(&outside, &s.0.join("linked"), 5, 12, false);
    for (root, want) in [
        (&inside, log),
        (&outside, outside.join("l00/l00/l00/l00/l00/train.log")),
    ] {
        let ran = scan_json(root, 20);
        assert_eq!(ran.code(), 1, "{}", ran.stderr());
        let doc: serde_json::Value = serde_json::from_str(&ran.stdout()).unwrap();
        let sources = doc["sources"].as_array().expect("one job's report");
        assert_eq!(sources.len(), 1, "{}", doc["sources"]);
        assert_eq!(sources[0]["path"], want.to_str().unwrap());
        assert!(
            ran.peak_anon_kib < MAX_ANON_KIB,
            "{} KiB",
            ran.peak_anon_kib
        );
    }
}

/// A 4 MiB `.gitignore` took 881 MiB and more (every rule compiled). An
/// ignore file is now read up to its limit, and one line says the rest was
/// not.
#[test]
fn a_huge_ignore_file_is_read_to_its_limit() {
    let s = Scratch::new("fs-huge-ignore");
    s.write("logs/early.log", OOM_LINE);
    s.write("logs/late.log", OOM_LINE);
    s.write("logs/train.log", b"INFO step 1 loss 0.5\n");
    let mut rules = String::from("early.log\n");
    let mut i = 0;
    while rules.len() < 4 << 20 {
        rules.push_str(&match i % 3 {
            0 => format!("run-{i}/*.tmp{}\n", i % 97),
            1 => format!("**/ckpt_{i}_*.bin\n"),
            _ => format!("/out/{i}/[a-z]*.log\n"),
        });
        i += 1;
    }
    rules.push_str("late.log\n");
    s.write("logs/.gitignore", rules.as_bytes());
    let dir = s.0.join("logs");
    let ran = scan_json(&dir, 120);
    assert_eq!(ran.code(), 1, "{}", ran.stderr());
    assert!(
        ran.peak_anon_kib < MAX_ANON_KIB,
        "{} KiB",
        ran.peak_anon_kib
    );
    let err = ran.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(".gitignore: only its first") && err.contains("rest is not used"),
        "{err}"
    );
    // The rule before the limit holds; the one after it is not read.
    let doc: serde_json::Value = serde_json::from_str(&ran.stdout()).unwrap();
    let names: Vec<String> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            j["verdict"]["path"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["late.log", "train.log"]);
}

/// A directory that cannot be read exited 0 (a file that cannot be read,
/// 2): now both are exit 2, the path named on standard error, and the rest
/// still scanned.
#[cfg(unix)]
#[test]
fn an_unreadable_directory_exits_2_naming_it() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("fs-unreadable-dir");
    s.write("logs/train.log", OOM_LINE);
    s.write("logs/locked/rank0.log", OOM_LINE);
    let locked = s.0.join("logs/locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let dir = s.0.join("logs");
    let ran = run(
        &["scan", "--format", "json", dir.to_str().unwrap()],
        Duration::from_secs(30),
        true,
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = ran.stderr();
    assert_eq!(ran.code(), 2, "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("cudnnlog: ") && l.contains(locked.to_str().unwrap())),
        "{err}"
    );
    assert_eq!(classes(&ran.stdout()), ["cuda.oom"]);
}
