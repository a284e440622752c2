//! Running the built binary from the repository root, as a user would.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn cudnnlog(args: &[&str], stdin: Option<&[u8]>) -> Output {
    cudnnlog_env(args, &[], stdin)
}

/// `cudnnlog ARGS` as a user without a config file or `CUDNNLOG_*`
/// variables runs it, plus the variables `env` sets.
pub fn cudnnlog_env(args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Output {
    let mut cmd = command(args);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// `cudnnlog ARGS` from the repository root, as a user without a config
/// file or `CUDNNLOG_*` variables runs it, its output captured; standard
/// input is the caller's to set (`Stdio::from(file)`: `< file`).
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudnnlog"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CUDNNLOG_FORMAT")
        .env_remove("CUDNNLOG_COLOR")
        .env_remove("CUDNNLOG_PATTERNS")
        // No user's config file.
        .env("CUDNNLOG_CONFIG", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Makes a FIFO at `path` (replacing what is there).
pub fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

pub fn json(out: &Output) -> cudnnlog::Report {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// A scratch directory removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cudnnlog-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn copy(&self, fixture: &str, to: &str) -> PathBuf {
        let dest = self.0.join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(root().join(fixture), &dest).unwrap();
        dest
    }

    pub fn write(&self, to: &str, bytes: &[u8]) -> PathBuf {
        let dest = self.0.join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(&dest, bytes).unwrap();
        dest
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }

    /// A FIFO made here (`mkfifo`).
    pub fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success());
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The logs of the fleet: real ones, two copies of one failure.
pub const FLEET_LOGS: &[(&str, &str)] = &[
    (
        "fixtures/real/h200-torch-oom-amp-train.log",
        "a/job-101.log",
    ),
    (
        "fixtures/real/h200-torch-oom-amp-train.log",
        "b/job-102.log",
    ),
    (
        "fixtures/real/h200-torch-device-assert.log",
        "a/job-103.log",
    ),
    (
        "fixtures/real/h200-torch-healthy-train.log",
        "c/job-104.log",
    ),
    ("fixtures/gpu/h200-g21_cudnn_status.log", "c/job-105.out"),
    (
        "fixtures/compressed/h200-torch-oom-amp-train.log.1.gz",
        "d/job-106.log.1.gz",
    ),
    (
        "fixtures/wild/cases/001-torch-rnn-exec-failed-cpu-tensor/log.txt",
        "d/job-107.txt",
    ),
];

/// Waits for `child` at most `limit`, reading its piped output meanwhile:
/// its output, or the test fails (it is killed) as a hang.
pub fn wait_at_most(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    use std::io::Read;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}
