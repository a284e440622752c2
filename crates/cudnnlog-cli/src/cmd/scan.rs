//! `cudnnlog scan`: choose the inputs, scan them (one report for one job,
//! verdicts for many), write the chosen format, and exit with the status
//! the findings give.

use crate::args::{FailOn, Format, ScanArgs};
use crate::cmd::{fleet, follow};
use crate::config::Config;
use crate::render::{Ctx, Render};
use crate::term::{self, Color, Stream};
use crate::{inputs, render, stream_sink};
use cudnnlog::report::FindingsSink;
use cudnnlog::sink::Fork;
use cudnnlog::{MmapChoice, Report, ScannerBuilder};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Scans what `args` names, with the defaults of `config`.
pub fn scan(mut args: ScanArgs, config: &Config, color: Color) -> anyhow::Result<ExitCode> {
    let mut dirs = config.patterns.clone();
    dirs.extend(args.patterns.iter().cloned());
    let catalog = crate::load_catalog(&dirs)?;
    if args.files.is_empty() {
        if std::io::stdin().is_terminal() {
            anyhow::bail!(
                "nothing to scan: name a log file or directory, or pipe a log in \
                 (`cudnnlog scan train.log`, `kubectl logs job/x | cudnnlog scan`)"
            );
        }
        args.files.push(PathBuf::from("-"));
    }
    let to_file = args.output.is_some();
    let format = args
        .format
        .or_else(|| args.output.as_deref().and_then(Format::of_path))
        .or(config.format)
        .unwrap_or(if std::io::stdout().is_terminal() && !to_file {
            Format::Table
        } else {
            Format::Compact
        });
    let render = render::renderer(format);
    let mut output = open_output(args.output.as_deref(), &args.files)?;
    // Colour and the terminal's width only for a terminal.
    let style = render::Style {
        color: !to_file && term::color(color, Stream::Stdout),
        width: if to_file {
            term::DEFAULT_WIDTH
        } else {
            term::width(Stream::Stdout)
        },
        verbose: args.verbose,
    };
    // Never freed: the process ends after the scan, and dropping the
    // catalog's thousands of strings and automata is a tenth of the scan
    // of a small log (a fleet scans thousands).
    let scanner = std::mem::ManuallyDrop::new(ScannerBuilder::new().build(catalog));
    if args.follow {
        let [path] = args.files.as_slice() else {
            anyhow::bail!("--follow watches exactly one file");
        };
        let limit = args.follow_for.map(std::time::Duration::from_secs_f64);
        follow::follow(&scanner, path, render.streams(), limit, &mut output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mmap = if args.no_mmap {
        MmapChoice::never()
    } else {
        // SAFETY: a log being appended to while mapped is fine (we see a
        // prefix); one truncated under us may end the process with SIGBUS.
        // ripgrep accepts the same trade for its default search.
        unsafe { MmapChoice::auto() }
    };

    let walk = cudnnlog::source::Walk {
        globs: args.glob.clone(),
        max_depth: args.max_depth,
        hidden: args.hidden,
        no_ignore: args.no_ignore,
    };
    let (inputs, notes) = inputs::expand(&args.files, &walk)?;
    for note in notes.iter().filter(|_| !args.quiet) {
        writeln!(
            std::io::stderr(),
            "cudnnlog: {}",
            render::sanitize_line(note)
        )?;
    }
    if inputs.is_empty() {
        anyhow::bail!("no files to scan (the directories hold no log files that match)");
    }
    let paths: Vec<PathBuf> = inputs
        .iter()
        .filter_map(|i| match i {
            inputs::Input::File(p) => Some(p.clone()),
            inputs::Input::Stdin => None,
        })
        .collect();
    let jobs = cudnnlog::fleet::group(&paths);
    let several = jobs.len() + usize::from(paths.len() < inputs.len()) > 1;
    if several && !args.job {
        if paths.len() < inputs.len() {
            anyhow::bail!(
                "standard input cannot be one job among files of others; \
                 add --job to take all inputs as one job"
            );
        }
        let ctx = Ctx {
            catalog: scanner.catalog(),
            style: &style,
        };
        let done = fleet::run(&scanner, &jobs, mmap, render, &ctx, args.quiet, output)?;
        let fails = match args.fail_on {
            FailOn::Never => false,
            FailOn::Warning => done.any_finding,
            FailOn::Error => done.summary.failed > 0,
        };
        let unreadable =
            jobs.len() as u64 > done.summary.jobs || done.summary.unreadable > 0 || done.any_error;
        return Ok(if unreadable {
            ExitCode::from(2)
        } else if fails {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    // One job: the ranks its files' names give (with `--job` too: files
    // that are visibly one job's ranks stay ranks, not runs).
    let rank_of: std::collections::HashMap<&std::path::Path, u32> = jobs
        .iter()
        .flat_map(|j| j.sources.iter())
        .filter_map(|s| Some((s.path.as_path(), s.rank?)))
        .collect();
    let mut sink = FindingsSink::new(scanner.catalog());
    let single = inputs.len() == 1;
    // Partial findings are streamed to a reader, not to a file.
    let shared = (render.streams() && !args.quiet && !to_file)
        .then(|| stream_sink::Shared::new(Box::new(std::io::stdout())));
    // Files are scanned in parallel, each into a fork of the sink; the forks
    // are joined in the order given, each numbered after the sources read
    // before it.
    // Several files: one bar for all of them, over their total size.
    let many_bar = if single {
        None
    } else {
        let paths = inputs.iter().filter_map(|i| match i {
            inputs::Input::File(p) => Some(p.as_path()),
            inputs::Input::Stdin => None,
        });
        progress_bar_many(paths, args.quiet)
    };
    let scanned: Vec<_> = {
        use rayon::prelude::*;
        let forks: Vec<stream_sink::Streaming<'_>> = inputs
            .iter()
            .map(|input| {
                let mut s = stream_sink::Streaming::new(sink.fork(), shared.clone());
                s.path = match input {
                    inputs::Input::Stdin => "<stdin>".into(),
                    inputs::Input::File(p) => p.display().to_string(),
                };
                s
            })
            .collect();
        inputs
            .par_iter()
            .zip(forks)
            .map(|(input, mut fork)| {
                let result = match input {
                    inputs::Input::Stdin => scanner.scan_stdin(&mut fork),
                    inputs::Input::File(path) => {
                        let bar = if single {
                            progress_bar(path, args.quiet)
                        } else {
                            None
                        };
                        // This file's share of the many-file bar so far.
                        let counted = std::sync::atomic::AtomicU64::new(0);
                        let result = scanner.scan_path_parallel(path, mmap, &mut fork, &|done| {
                            if let Some(bar) = &bar {
                                bar.set_position(done);
                            }
                            if let Some(bar) = &many_bar {
                                let before =
                                    counted.fetch_max(done, std::sync::atomic::Ordering::Relaxed);
                                bar.inc(done.saturating_sub(before));
                            }
                        });
                        if let Some(bar) = bar {
                            bar.finish_and_clear();
                        }
                        result
                    }
                };
                (result, fork)
            })
            .collect()
    };
    if let Some(bar) = many_bar {
        bar.finish_and_clear();
    }
    let mut failed = false;
    for ((result, mut fork), input) in scanned.into_iter().zip(&inputs) {
        let rank = match input {
            inputs::Input::File(p) => rank_of.get(p.as_path()),
            inputs::Input::Stdin => None,
        };
        // A truncated or corrupt archive, or a read that failed part way:
        // what was read before it was scanned. The fork has that source
        // and its findings; the error is still reported (one line, exit 2).
        // A scan that failed otherwise has no source: its fork is dropped.
        let read = fork.inner.sources().len() == 1;
        let closed = shared.as_ref().is_some_and(|s| s.closed());
        // An error is one line on standard error, unless output was closed.
        let mut report = |err: &cudnnlog::Error| -> std::io::Result<()> {
            failed = true;
            if args.quiet {
                return Ok(());
            }
            let line = render::sanitize_line(&err.to_string());
            writeln!(std::io::stderr(), "cudnnlog: {line}")
        };
        match result {
            Err(_) if closed => {}
            Err(err) => report(&err)?,
            Ok(_) => {}
        }
        if read {
            if let Some(&rank) = rank {
                fork.inner.assume_rank(rank);
            }
            sink.join(fork.inner);
        }
    }
    if let Some(shared) = shared.as_ref().filter(|s| s.closed()) {
        // The reader left: what was announced decides the status.
        let fails = match args.fail_on {
            FailOn::Never => false,
            FailOn::Warning => shared.announced(),
            FailOn::Error => shared.saw_error(),
        };
        return Ok(if fails {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    let report = sink.into_report();
    let fails = match args.fail_on {
        FailOn::Never => false,
        FailOn::Warning => !report.findings.is_empty(),
        FailOn::Error => report
            .findings
            .iter()
            .any(|f| f.severity == cudnnlog::catalog::Severity::Error),
    };
    let code = if failed {
        ExitCode::from(2)
    } else if fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    let closed = shared.as_ref().is_some_and(|s| s.closed());
    if args.quiet || closed {
        return Ok(code);
    }
    let ctx = Ctx {
        catalog: scanner.catalog(),
        style: &style,
    };
    match write_report(&mut output, &report, render, &ctx) {
        // The reader has what it wanted (`| head`): the findings decide.
        Err(e) if crate::is_broken_pipe(&e) => Ok(code),
        Err(e) => Err(e),
        Ok(()) => Ok(code),
    }
}

/// Where the report goes: standard output, or the file `--output` names
/// (created, or truncated) — never one of the `inputs` (`-o train.log`
/// would empty the log before it is read).
fn open_output(
    path: Option<&std::path::Path>,
    inputs: &[PathBuf],
) -> anyhow::Result<Box<dyn Write + Send>> {
    use anyhow::Context;
    use std::os::unix::fs::MetadataExt;
    let id = |p: &std::path::Path| {
        std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| (m.dev(), m.ino()))
    };
    if let Some(out) = path.and_then(id) {
        if let Some(input) = inputs.iter().find(|i| id(i) == Some(out)) {
            anyhow::bail!(
                "--output {} is an input of the scan: writing it would destroy the log",
                render::sanitize_line(&input.display().to_string())
            );
        }
    }
    Ok(match path {
        None => Box::new(std::io::stdout()),
        Some(p) => {
            let file = std::fs::File::create(p).with_context(|| {
                format!(
                    "cannot write {}",
                    render::sanitize_line(&p.display().to_string())
                )
            })?;
            Box::new(file)
        }
    })
}

/// The report with `render` on `out`.
fn write_report(
    out: &mut dyn Write,
    report: &Report,
    render: &dyn Render,
    ctx: &Ctx<'_>,
) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    render.report(&mut out, ctx, report)?;
    out.flush()?;
    Ok(())
}

/// Files larger than this get a progress bar on a terminal.
const PROGRESS_MIN_BYTES: u64 = 256 << 20;

/// A progress bar on standard error for a large file, when standard error
/// is a terminal and `--quiet` is not given.
fn progress_bar(path: &std::path::Path, quiet: bool) -> Option<indicatif::ProgressBar> {
    let len = std::fs::metadata(path).ok()?.len();
    bar(
        len,
        render::sanitize_line(&path.display().to_string()),
        quiet,
    )
}

/// One progress bar for several files together, over their total size.
fn progress_bar_many<'p>(
    paths: impl Iterator<Item = &'p std::path::Path>,
    quiet: bool,
) -> Option<indicatif::ProgressBar> {
    let (files, len) = paths.fold((0u64, 0u64), |(n, len), p| {
        (n + 1, len + std::fs::metadata(p).map_or(0, |m| m.len()))
    });
    bar(len, format!("{files} files"), quiet)
}

/// A bar over `len` bytes labelled `msg`: only over
/// [`PROGRESS_MIN_BYTES`], on a terminal, without `--quiet`.
fn bar(len: u64, msg: String, quiet: bool) -> Option<indicatif::ProgressBar> {
    if quiet || len < PROGRESS_MIN_BYTES || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
        )
        .ok()?
        .progress_chars("=> "),
    );
    bar.set_message(msg);
    Some(bar)
}
