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
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    child.wait_with_output().unwrap()
}

pub fn json(out: &Output) -> cudnnlog::Report {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}
