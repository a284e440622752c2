//! `cudnnlog run -- CMD ARGS…`: run a training command, pass its output
//! through live, keep a copy, and diagnose it when it exits. The exit status
//! is the child's (a signal N becomes 128+N, as shells report it).

use anyhow::Context;
use cudnnlog::report::FindingsSink;
use cudnnlog::{MmapChoice, ScannerBuilder};
use std::io::IsTerminal;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// Copies `from` to `to` and to the shared log, chunk by chunk.
fn tee(
    mut from: impl Read + Send + 'static,
    mut to: impl Write + Send + 'static,
    log: Arc<Mutex<std::fs::File>>,
) -> std::thread::JoinHandle<std::io::Result<()>> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 64 << 10];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // The job's own output goes on even when ours is closed.
            let _ = to.write_all(&buf[..n]).and_then(|_| to.flush());
            log.lock()
                .map_err(|_| std::io::Error::other("log lock poisoned"))?
                .write_all(&buf[..n])?;
        }
    })
}

/// Runs `cmd`, returns the exit code to report and the path of the log.
pub fn run(cmd: &[String], log_path: Option<&Path>) -> anyhow::Result<(u8, PathBuf)> {
    let (program, args) = cmd
        .split_first()
        .context("nothing to run: `cudnnlog run -- CMD ARGS…`")?;
    let path = match log_path {
        Some(p) => p.to_path_buf(),
        None => std::env::temp_dir().join(format!("cudnnlog-run-{}.log", std::process::id())),
    };
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let log = Arc::new(Mutex::new(file));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {program}"))?;
    let out = tee(
        child.stdout.take().expect("piped"),
        std::io::stdout(),
        Arc::clone(&log),
    );
    let err = tee(
        child.stderr.take().expect("piped"),
        std::io::stderr(),
        Arc::clone(&log),
    );
    let status = child.wait().context("waiting for the command")?;
    for t in [out, err] {
        t.join()
            .map_err(|_| anyhow::anyhow!("an output thread panicked"))?
            .context("copying the command's output")?;
    }
    let code = match status.code() {
        Some(c) => c,
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                128 + status.signal().unwrap_or(0)
            }
            #[cfg(not(unix))]
            {
                1
            }
        }
    };
    Ok((code.clamp(0, 255) as u8, path))
}

/// `cudnnlog run`: runs the command, then prints the diagnosis of its
/// output on standard error; returns the command's exit status.
pub fn main(cmd: &[String], keep: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (code, path) = run(cmd, keep)?;
    let catalog = crate::load_catalog(&[])?;
    let scanner = ScannerBuilder::new().build(catalog);
    let mut sink = FindingsSink::new(scanner.catalog());
    let info = scanner.scan_path(0, &path, MmapChoice::never(), &mut sink)?;
    if keep.is_none() {
        let _ = std::fs::remove_file(&path);
    }
    let report = sink.into_report(vec![info]);
    // The diagnosis goes to standard error: standard output was the job's.
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "\ncudnnlog: the command exited with status {code}; diagnosis:"
    )?;
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    crate::render::table(&mut err, &report, scanner.catalog(), color)?;
    Ok(ExitCode::from(code))
}
