//! `cudnnlog`: the command-line front end. Parsing arguments, choosing an
//! output format and exit code; everything else is the library's.

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use cudnnlog::catalog::Pattern;
use cudnnlog::report::FindingsSink;
use cudnnlog::sink::Fork;
use cudnnlog::{Catalog, CatalogBuilder, MmapChoice, Report, ScannerBuilder};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod catalog_cmd;
mod fleet_cmd;
mod follow;
mod inputs;
mod json_out;
mod markdown;
mod render;
mod run_cmd;
mod stream_sink;

/// Reads deep-learning training logs and says what went wrong, why, and what to do.
#[derive(Parser)]
#[command(name = "cudnnlog", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan logs for cuDNN, CUDA and job failures.
    ///
    /// Exit status: 0 when no finding is an error, 1 when one is, 2 on a
    /// usage or I/O error (the other files are still scanned).
    Scan(ScanArgs),
    /// Explain a class id, a root-cause id or a pattern id: what it is, why
    /// it happens, how to fix it, an example.
    ///
    /// Exit status: 0, or 2 for an unknown id.
    Explain {
        /// `cuda.oom`, `fragmentation`, `cuda-oom-pytorch-allocator`, …
        id: String,
        /// Add the patterns in this directory to the built-in catalog.
        #[arg(long = "patterns", value_name = "DIR")]
        patterns: Vec<PathBuf>,
    },
    /// Run a command, pass its output through, keep a copy, and diagnose it
    /// when it exits; the exit status is the command's (128+N for signal N).
    Run {
        /// Keep the copy of the output here (default: a temporary file,
        /// removed afterwards).
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
        /// The command and its arguments, after `--`.
        #[arg(required = true, last = true, value_name = "CMD")]
        cmd: Vec<String>,
    },
    /// List or check the pattern catalog.
    #[command(subcommand)]
    Patterns(PatternsCommand),
}

#[derive(Subcommand)]
enum PatternsCommand {
    /// List the patterns of the catalog (built-in and `--patterns` ones).
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = ListFormat::Table)]
        format: ListFormat,
        /// Only patterns of this class or family (`cuda.oom`, `cudnn`).
        #[arg(long)]
        class: Option<String>,
        /// Add the patterns in this directory to the built-in catalog.
        #[arg(long = "patterns", value_name = "DIR")]
        patterns: Vec<PathBuf>,
    },
    /// Validate pattern directories and run their examples and
    /// counterexamples (against the built-in catalog plus these
    /// directories). Without a directory, checks the built-in catalog.
    ///
    /// Exit status: 0 when all pass, 1 when a case fails, 2 when a file is
    /// malformed.
    Check {
        /// Directories of pattern files.
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// Draft pattern files for the unclassified error templates of logs:
    /// anchors, a regex and an example, ready to edit and check.
    Suggest {
        /// Logs to scan.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// How many templates (the most frequent first).
        #[arg(long, default_value_t = 3)]
        top: usize,
        /// Write one file per pattern into this directory instead of
        /// printing them.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    Table,
    Json,
    /// Every distinct anchor (patterns and environment probes), one per
    /// line: the literal list a benchmark hands to `rg -F -f`.
    Anchors,
}

#[derive(clap::Args)]
struct ScanArgs {
    /// Log files or directories (walked recursively) to read; `-` reads
    /// standard input. gzip and zstd files are decompressed.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Watch one growing file (`tail -f`: truncation and rotation are
    /// handled) and report each new finding as it appears; runs until
    /// interrupted. With `--format ndjson`, a JSON object per finding.
    #[arg(long, short = 'f')]
    follow: bool,
    /// Stop following after this many seconds (for scripts and tests).
    #[arg(long, value_name = "SECS", hide = true)]
    follow_for: Option<f64>,
    /// In directories, only files that match this glob (`*.log*`,
    /// `rank*.txt`); `!GLOB` excludes. May be repeated (rg's syntax).
    #[arg(long, short = 'g', value_name = "GLOB")]
    glob: Vec<String>,
    /// Walk directories at most this deep (1: a directory's own files).
    #[arg(long, value_name = "N")]
    max_depth: Option<usize>,
    /// Walk hidden files and directories too.
    #[arg(long)]
    hidden: bool,
    /// Do not read `.gitignore`, `.ignore` or `.cudnnlogignore` files.
    #[arg(long)]
    no_ignore: bool,
    /// Take every input as one job: one report across all files, with
    /// fallout and culprits across them. Without it, each file is its own
    /// job (a verdict each), except the ranks or streams of one job
    /// (`rank0.log`, `rank1.log`; torchrun's `attempt_0/<rank>/stderr.log`).
    #[arg(long)]
    job: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Add the patterns in this directory to the built-in catalog (a pattern
    /// with a built-in id replaces it). May be repeated.
    #[arg(long = "patterns", value_name = "DIR")]
    patterns: Vec<PathBuf>,
    /// When to colour the table: auto colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Read files instead of memory-mapping them.
    #[arg(long)]
    no_mmap: bool,
    /// No progress bar (shown on a terminal for files over 256 MiB).
    #[arg(long, short)]
    quiet: bool,
    /// Exit 1 when a finding is at least this severe: `error` (the
    /// default), `warning` (any finding), or `never` (always 0 unless a
    /// file could not be read).
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FailOn {
    Never,
    Warning,
    Error,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Summary table, then causes and remediations for each error.
    Table,
    /// One JSON document (schema cudnnlog.report/1).
    Json,
    /// One JSON object per line: findings, then a summary.
    Ndjson,
    /// A report to paste into an issue or incident ticket.
    Markdown,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scan(args) => scan(args),
        Command::Run { log, cmd } => run_cmd::main(&cmd, log.as_deref()),
        Command::Explain { id, patterns } => explain(&id, &patterns),
        Command::Patterns(PatternsCommand::List {
            format,
            class,
            patterns,
        }) => list(format, class.as_deref(), &patterns),
        Command::Patterns(PatternsCommand::Check { dirs }) => check(&dirs),
        Command::Patterns(PatternsCommand::Suggest { files, top, out }) => {
            suggest(&files, top, out.as_deref())
        }
    };
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "cudnnlog: {}",
                render::sanitize(&format!("{err:#}"))
            );
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn load_catalog(dirs: &[PathBuf]) -> anyhow::Result<Catalog> {
    let mut builder = CatalogBuilder::new();
    for dir in dirs {
        builder.add_dir(dir);
    }
    builder.build().context("cannot load the pattern catalog")
}

fn explain(id: &str, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(dirs)?;
    let Some(text) = catalog_cmd::explain(&catalog, id) else {
        let similar = catalog_cmd::similar_ids(&catalog, id);
        let hint = if similar.is_empty() {
            "; `cudnnlog patterns list` shows the patterns".to_string()
        } else {
            format!("; did you mean {}?", similar.join(", "))
        };
        anyhow::bail!("no class, cause or pattern has the id {id:?}{hint}");
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn list(format: ListFormat, class: Option<&str>, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(dirs)?;
    let mut patterns: Vec<&Pattern> = catalog
        .patterns()
        .iter()
        .filter(|p| class.is_none_or(|c| p.class == c || p.class.split('.').next() == Some(c)))
        .collect();
    patterns.sort_by(|a, b| a.class.cmp(&b.class).then_with(|| a.id.cmp(&b.id)));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match format {
        ListFormat::Table => catalog_cmd::list_table(&mut out, &patterns)?,
        ListFormat::Json => {
            json_out::pretty(&mut out, &catalog_cmd::list_json(&patterns))?;
            writeln!(out)?;
        }
        ListFormat::Anchors => {
            let probes = catalog.probes().iter().filter(|_| class.is_none());
            let mut anchors: Vec<&str> = patterns
                .iter()
                .flat_map(|p| p.anchors.iter())
                .chain(probes.flat_map(|p| p.anchors.iter()))
                .map(String::as_str)
                .collect();
            anchors.sort_unstable();
            anchors.dedup();
            for a in anchors {
                writeln!(out, "{}", render::sanitize(a))?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn suggest(
    files: &[PathBuf],
    top: usize,
    out_dir: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(&[])?;
    let scanner = ScannerBuilder::new().build(catalog);
    let mut sink = FindingsSink::new(scanner.catalog());
    let mut sources = Vec::new();
    for (i, path) in files.iter().enumerate() {
        // Read, not mapped: this is a one-off look at a few logs.
        let info = scanner
            .scan_path(i, path, MmapChoice::never(), &mut sink)
            .with_context(|| format!("cannot scan {}", path.display()))?;
        sources.push(info);
    }
    let report = sink.into_report(sources);
    let mut stdout = std::io::stdout().lock();
    if report.unclassified.is_empty() {
        writeln!(stdout, "no unclassified error lines: nothing to suggest")?;
        return Ok(ExitCode::SUCCESS);
    }
    for t in report.unclassified.iter().take(top) {
        let (id, text) = catalog_cmd::suggest(t);
        match out_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                let path = dir.join(format!("{id}.toml"));
                std::fs::write(&path, &text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                writeln!(
                    stdout,
                    "wrote {}",
                    render::sanitize(&path.display().to_string())
                )?;
            }
            None => {
                writeln!(stdout, "# ---- {id}.toml")?;
                stdout.write_all(render::sanitize(&text).as_bytes())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check(dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(dirs)?;
    // The files a directory contributed are named by paths under it.
    let prefixes: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let mine = |p: &Pattern| dirs.is_empty() || prefixes.iter().any(|d| p.file.starts_with(d));
    let checked: Vec<&Pattern> = catalog.patterns().iter().filter(|p| mine(p)).collect();
    let failures = cudnnlog::check::check_patterns(&catalog, |p| mine(p));
    let mut out = std::io::stdout().lock();
    for f in &failures {
        writeln!(out, "FAIL {}", render::sanitize(&f.to_string()))?;
    }
    let examples: usize = checked.iter().map(|p| p.examples.len()).sum();
    let counter: usize = checked.iter().map(|p| p.counterexamples.len()).sum();
    writeln!(
        out,
        "{} patterns, {examples} examples, {counter} counterexamples: {}",
        checked.len(),
        if failures.is_empty() {
            "all pass".to_string()
        } else {
            format!("{} failing", failures.len())
        }
    )?;
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn scan(args: ScanArgs) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(&args.patterns)?;
    // Never freed: the process ends after the scan, and dropping the
    // catalog's thousands of strings and automata is a tenth of the scan
    // of a small log (a fleet scans thousands).
    let scanner = std::mem::ManuallyDrop::new(ScannerBuilder::new().build(catalog));
    if args.follow {
        let [path] = args.files.as_slice() else {
            anyhow::bail!("--follow watches exactly one file");
        };
        let limit = args.follow_for.map(std::time::Duration::from_secs_f64);
        let mut out = std::io::stdout().lock();
        follow::follow(
            &scanner,
            path,
            args.format == Format::Ndjson,
            limit,
            &mut out,
        )?;
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

    let walk = cudnnlog::walk::Walk {
        globs: args.glob.clone(),
        max_depth: args.max_depth,
        hidden: args.hidden,
        no_ignore: args.no_ignore,
    };
    let (inputs, notes) = inputs::expand(&args.files, &walk)?;
    for note in &notes {
        writeln!(std::io::stderr(), "cudnnlog: {}", render::sanitize(note))?;
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
    let jobs = cudnnlog::job::group(&paths);
    let several = jobs.len() + usize::from(paths.len() < inputs.len()) > 1;
    if several && !args.job {
        if paths.len() < inputs.len() {
            anyhow::bail!(
                "standard input cannot be one job among files of others; \
                 add --job to take all inputs as one job"
            );
        }
        let color = color_on(args.color);
        let done = fleet_cmd::run(&scanner, &jobs, mmap, args.format, color, args.quiet)?;
        let fails = match args.fail_on {
            FailOn::Never => false,
            FailOn::Warning => done.any_finding,
            FailOn::Error => done.summary.failed > 0,
        };
        let unreadable = jobs.len() as u64 > done.summary.jobs || done.summary.unreadable > 0;
        return Ok(if unreadable {
            ExitCode::from(2)
        } else if fails {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    // One job: the ranks its files' names give.
    let rank_of: std::collections::HashMap<&std::path::Path, u32> = jobs
        .iter()
        .filter(|_| !args.job)
        .flat_map(|j| j.sources.iter())
        .filter_map(|s| Some((s.path.as_path(), s.rank?)))
        .collect();
    let mut sink = FindingsSink::new(scanner.catalog());
    let single = inputs.len() == 1;
    let shared = (args.format == Format::Ndjson)
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
                    inputs::Input::Stdin => {
                        match cudnnlog::source::decompressed(std::io::stdin()) {
                            Ok((_, reader)) => scanner.scan_reader(0, "<stdin>", reader, &mut fork),
                            Err(e) => Err(cudnnlog::Error::Io {
                                path: "<stdin>".into(),
                                source: e,
                            }),
                        }
                    }
                    inputs::Input::File(path) => {
                        let bar = if single {
                            progress_bar(path, args.quiet)
                        } else {
                            None
                        };
                        // This file's share of the many-file bar so far.
                        let counted = std::sync::atomic::AtomicU64::new(0);
                        let result =
                            scanner.scan_path_parallel(0, path, mmap, &mut fork, &|done| {
                                if let Some(bar) = &bar {
                                    bar.set_position(done);
                                }
                                if let Some(bar) = &many_bar {
                                    let before = counted
                                        .fetch_max(done, std::sync::atomic::Ordering::Relaxed);
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
    let mut sources = Vec::new();
    let mut failed = false;
    for ((result, mut fork), input) in scanned.into_iter().zip(&inputs) {
        let rank = match input {
            inputs::Input::File(p) => rank_of.get(p.as_path()),
            inputs::Input::Stdin => None,
        };
        match result {
            Ok(info) => {
                if let Some(&rank) = rank {
                    fork.inner.assume_rank(rank);
                }
                fork.inner.set_source(sources.len());
                sink.join(fork.inner);
                sources.push(info);
            }
            Err(err) => {
                failed = true;
                writeln!(
                    std::io::stderr(),
                    "cudnnlog: {}",
                    render::sanitize(&err.to_string())
                )?;
            }
        }
    }
    let report = sink.into_report(sources);

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Json => {
            json_out::pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        Format::Ndjson => write_ndjson(&mut out, &report)?,
        Format::Markdown => markdown::markdown(&mut out, &report, scanner.catalog())?,
        Format::Table => {
            render::table(&mut out, &report, scanner.catalog(), color_on(args.color))?;
        }
    }
    out.flush()?;
    let fails = match args.fail_on {
        FailOn::Never => false,
        FailOn::Warning => !report.findings.is_empty(),
        FailOn::Error => report
            .findings
            .iter()
            .any(|f| f.severity == cudnnlog::catalog::Severity::Error),
    };
    Ok(if failed {
        ExitCode::from(2)
    } else if fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether to colour standard output: auto colours a terminal unless
/// `NO_COLOR` is set or `TERM` is `dumb`.
fn color_on(choice: Color) -> bool {
    match choice {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
        }
    }
}

/// Files larger than this get a progress bar on a terminal.
const PROGRESS_MIN_BYTES: u64 = 256 << 20;

/// A progress bar on standard error for a large file, when standard error
/// is a terminal and `--quiet` is not given.
fn progress_bar(path: &std::path::Path, quiet: bool) -> Option<indicatif::ProgressBar> {
    let len = std::fs::metadata(path).ok()?.len();
    bar(len, render::sanitize(&path.display().to_string()), quiet)
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

/// One `{"type":"finding",…}` line per finding, then one `{"type":"summary",…}`.
fn write_ndjson(out: &mut impl Write, report: &Report) -> anyhow::Result<()> {
    for f in &report.findings {
        let mut v = serde_json::to_value(f)?;
        v.as_object_mut()
            .expect("a finding is an object")
            .insert("type".into(), "finding".into());
        json_out::compact(&mut *out, &v)?;
        writeln!(out)?;
    }
    for t in &report.unclassified {
        let mut v = serde_json::to_value(t)?;
        v.as_object_mut()
            .expect("a template is an object")
            .insert("type".into(), "unclassified".into());
        json_out::compact(&mut *out, &v)?;
        writeln!(out)?;
    }
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == cudnnlog::catalog::Severity::Error)
        .count();
    let summary = serde_json::json!({
        "type": "summary",
        "schema": report.schema,
        "sources": report.sources,
        "environment": report.environment,
        "outcome": report.outcome,
        "primary": report.primary,
        "cross_run": report.cross_run,
        "findings": report.findings.len(),
        "errors": errors,
    });
    json_out::compact(&mut *out, &summary)?;
    writeln!(out)?;
    Ok(())
}
