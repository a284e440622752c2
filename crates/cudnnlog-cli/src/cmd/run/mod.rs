//! `cudnnlog run -- CMD ARGS…`: run a training command, pass its output
//! through live, keep a copy, and diagnose it when it exits.
//!
//! A wrapper must not change how the job behaves, so:
//! - the child runs on a pty when our standard output is a terminal (its
//!   output stays line-buffered, progress bars work; stdout and stderr are
//!   then one stream), else on pipes with `PYTHONUNBUFFERED=1`;
//! - SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are passed on to
//!   it (one ignored at our start, as `nohup` leaves SIGHUP, stays ignored),
//!   and its output is read until it exits, so its last words reach the log
//!   and come before the diagnosis;
//! - the exit status is the shell's: the child's code, 128+N for signal N,
//!   127 for a command not found, 126 for one that cannot be executed (2
//!   stays cudnnlog's own errors);
//! - a log copy that cannot be written (a full disk) stops being written,
//!   with one warning, and the job goes on;
//! - cudnnlog returns when the child exits, even if a grandchild holds its
//!   output open;
//! - the child never runs on unwatched: on an error of ours it is killed
//!   and reaped.

#[cfg(unix)]
mod child;
mod exit_map;
#[cfg(unix)]
mod pump;
#[cfg(unix)]
mod signals;
mod termination;

use std::path::Path;
use std::process::ExitCode;

/// `cudnnlog run`: runs the command, then prints the diagnosis of its
/// output on standard error; returns the command's exit status.
pub fn main(args: &crate::args::RunArgs, color: crate::term::Color) -> anyhow::Result<ExitCode> {
    if args.cmd.is_empty() && args.exit_code_map {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(exit_map::table().as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    run(
        args,
        Some(crate::term::color(color, crate::term::Stream::Stderr)),
    )
}

/// Whether the diagnosis is coloured: the CLI's `--color` choice (decided
/// for standard error by [`crate::term::color`]).
fn use_color(choice: Option<bool>) -> bool {
    choice.unwrap_or_else(|| {
        crate::term::color(crate::term::Color::Auto, crate::term::Stream::Stderr)
    })
}

#[cfg(not(unix))]
fn run(_args: &crate::args::RunArgs, _color: Option<bool>) -> anyhow::Result<ExitCode> {
    let _ = (use_color, termination::message, exit_map::mapped);
    anyhow::bail!("`cudnnlog run` needs a Unix system; run the job and `cudnnlog scan` its log")
}

#[cfg(unix)]
fn run(run_args: &crate::args::RunArgs, color: Option<bool>) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    use cudnnlog::report::FindingsSink;
    use cudnnlog::ScannerBuilder;
    use std::io::Write;

    let keep = run_args.log.as_deref();
    let (program, args) = run_args
        .cmd
        .split_first()
        .context("nothing to run: `cudnnlog run -- CMD ARGS…`")?;
    // Everything that can fail on our side fails before the job starts.
    let scanner = ScannerBuilder::new().build(crate::load_catalog(&[])?);
    let mut copy = crate::cmd::log_copy::LogCopy::create(keep)?;
    let termination = run_args.termination_log.as_deref();
    let mut termination = termination.map(termination::Log::create).transpose()?;
    let signals = signals::Signals::install()?;
    let mut job = match child::spawn(program, args) {
        Ok(job) => job,
        Err(e) => {
            let (code, why) = cannot_run(program, &e);
            if let Some(log) = termination.as_mut() {
                let line = format!("failed (status {code}): {program}: {why}");
                if let Err(e) = log.write(&termination::one_line(&line)) {
                    let line = crate::render::sanitize_line(&format!("{e:#}"));
                    let _ = writeln!(std::io::stderr(), "cudnnlog: {line}");
                }
            }
            return Ok(ExitCode::from(code));
        }
    };
    let status = pump::pump(&mut job, &signals, &mut copy)?;
    drop(signals);
    let code = child::exit_code(status);
    let ended = how_it_ended(status, code);
    // A signal leaves no trace in the job's own output: the copy ends with
    // the line that says which, for the catalog to read (a crash, the OOM
    // killer's SIGKILL), now and in a later scan of a kept copy.
    if signal_of(status).is_some() {
        copy.append_line(&format!("cudnnlog: {ended}"));
    }

    let mut sink = FindingsSink::new(scanner.catalog());
    let name = match keep {
        Some(path) => path.display().to_string(),
        None => format!("output of {program}"),
    };
    scanner.scan_reader(&name, copy.reader()?, &mut sink)?;
    let report = sink.into_report();
    // The diagnosis goes to standard error: standard output was the job's.
    let mut err = std::io::stderr().lock();
    writeln!(err, "\ncudnnlog: {ended}; diagnosis:")?;
    crate::render::table(&mut err, &report, scanner.catalog(), use_color(color))?;
    if let Some(log) = termination.as_mut() {
        if let Err(e) = log.write(&termination::message(&report, &ended)) {
            let line = crate::render::sanitize_line(&format!("{e:#}"));
            writeln!(err, "cudnnlog: {line}")?;
        }
    }
    if !run_args.exit_code_map {
        return Ok(ExitCode::from(code));
    }
    let action = report.action.map(cudnnlog::report::Action::as_str);
    let mapped = exit_map::mapped(action, code);
    if mapped != code {
        let action = action.unwrap_or("none");
        writeln!(
            err,
            "cudnnlog: action {action}: exit status {mapped} (--exit-code-map)"
        )?;
    }
    Ok(ExitCode::from(mapped))
}

/// The signal that ended the command, if one did.
#[cfg(unix)]
fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// "the command exited with status 3", "… was killed by SIGKILL (status
/// 137)": the catalog's `*-cudnnlog-run` patterns read the second form.
#[cfg(unix)]
fn how_it_ended(status: std::process::ExitStatus, code: u8) -> String {
    match signal_of(status) {
        Some(signal) => {
            let name = signal_hook::low_level::signal_name(signal)
                .map_or_else(|| format!("signal {signal}"), str::to_owned);
            format!("the command was killed by {name} (status {code})")
        }
        None => format!("the command exited with status {code}"),
    }
}

/// Reports a command that could not be started, in one line as a shell
/// would; the shell's status for it (127 not found, 126 not runnable) and
/// why.
#[cfg(unix)]
fn cannot_run(program: &str, error: &std::io::Error) -> (u8, String) {
    use std::io::Write;
    let (code, why) = match error.kind() {
        // A script whose interpreter (#!) is missing is there but not runnable.
        std::io::ErrorKind::NotFound if program.contains('/') && Path::new(program).exists() => {
            (126, "bad interpreter: No such file or directory".to_owned())
        }
        std::io::ErrorKind::NotFound if program.contains('/') => {
            (127, "No such file or directory".to_owned())
        }
        std::io::ErrorKind::NotFound => (127, "command not found".to_owned()),
        std::io::ErrorKind::PermissionDenied => (126, "Permission denied".to_owned()),
        _ => (126, format!("cannot execute: {error}")),
    };
    let _ = writeln!(
        std::io::stderr(),
        "cudnnlog: {}: {why}",
        crate::render::sanitize(program)
    );
    (code, why)
}
