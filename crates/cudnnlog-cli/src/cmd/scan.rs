//! `cudnnlog scan`, in three steps: a [`Plan`] from the arguments and the
//! config (the inputs, the format and style, the mode: `--follow`, one
//! job, or a fleet of jobs); its run, which scans through the library
//! (one job with [`cudnnlog::fleet::scan_inputs`], many with
//! [`cudnnlog::fleet::triage`]) and writes with the format's renderer; and
//! one exit policy ([`exit_code`]) over what the run [`Seen`].

use crate::args::{FailOn, Format, ScanArgs};
use crate::cmd::fleet;
use crate::cmd::follow::{self, Followed, Live};
use crate::cmd::watch;
use crate::config::Config;
use crate::inputs;
use crate::output::{self, Landing, Reads, Timing};
use crate::render::{self, Ctx, Render, Style};
use crate::stream_sink::{Shared, Streaming};
use crate::term::{self, Color, Stream};
use anyhow::Context;
use cudnnlog::fleet::{JobInput, ScanHooks};
use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, MmapChoice, Report, Scanner, ScannerBuilder};
use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Scans what `args` names, with the defaults of `config`.
pub fn scan(args: ScanArgs, config: &Config, color: Color) -> anyhow::Result<ExitCode> {
    let fail_on = args.fail_on;
    let seen = Plan::new(args, config, color)?.run()?;
    Ok(exit_code(fail_on, &seen))
}

/// What a scan will do, decided from the arguments and the config before
/// a log is read.
struct Plan {
    /// The patterns to scan with.
    catalog: Catalog,
    /// What to scan, and how the inputs make jobs.
    mode: Mode,
    /// What the walk of directories left out, by reason
    /// ([`cudnnlog::source::Walked::counts`]).
    skipped: BTreeMap<String, u64>,
    /// Whether files are mapped (`--no-mmap`: never).
    mmap: MmapChoice,
    /// Where and how the results are written.
    output: Output,
}

/// What to scan.
enum Mode {
    /// `--follow`: watch one file (`-`: standard input) as it grows, for
    /// `limit` when given.
    Follow {
        path: PathBuf,
        limit: Option<Duration>,
    },
    /// `--follow DIR`: a verdict per job of the directory as each ends
    /// (quiet for `idle`), for `limit` when given.
    FollowDir {
        dir: PathBuf,
        walk: cudnnlog::source::Walk,
        idle: Duration,
        limit: Option<Duration>,
    },
    /// One job: one report of all the inputs (the ranks their names give).
    Job(Vec<JobInput>),
    /// Many jobs: a verdict each, then the fleet's summary.
    Fleet(Vec<cudnnlog::fleet::Job>),
}

/// Where and how the results are written.
struct Output {
    /// The format's renderer.
    render: &'static dyn Render,
    /// Colour, width and verbosity.
    style: Style,
    /// Standard output, or the file `--output` names.
    out: Box<dyn Write + Send>,
    /// Puts the file `--output` names in place once it is written.
    landing: Landing,
    /// `--output` was given: partial findings are not streamed to a file.
    to_file: bool,
    /// The format chosen.
    format: Format,
    /// `--quiet`: no progress bar, no notes, and nothing on standard
    /// output ([`silent`](Output::silent)); errors are still said on
    /// standard error, and a report file still written.
    quiet: bool,
}

impl Output {
    /// Nothing is written: `--quiet` with standard output as the output.
    /// A report file is written whatever `--quiet` says: `-q -o r.html`
    /// is how a CI job keeps a report and prints nothing.
    fn silent(&self) -> bool {
        self.quiet && !self.to_file
    }
}

/// What a run saw, as far as the exit status goes.
struct Seen {
    /// An input could not be read, or not to its end.
    unreadable: bool,
    /// A finding of any severity (`--fail-on warning`).
    finding: bool,
    /// A failure (`--fail-on error`): an error finding in one job's
    /// report, a failed job in a fleet.
    failure: bool,
    /// No input could be read at all (one job's): its errors are the whole
    /// answer, and no report is written.
    nothing_read: bool,
}

/// The exit status: 2 when an input could not be read, 1 when what was
/// seen is as bad as `--fail-on` says, else 0.
fn exit_code(fail_on: FailOn, seen: &Seen) -> ExitCode {
    let fails = match fail_on {
        FailOn::Never => false,
        FailOn::Warning => seen.finding,
        FailOn::Error => seen.failure,
    };
    if seen.unreadable {
        ExitCode::from(2)
    } else if fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

impl Plan {
    /// The plan for `args`: the catalog, the inputs and how they make
    /// jobs, the format (`--format`, else the output file's extension,
    /// else the config's, else `table` on a terminal and `compact`
    /// elsewhere), the output (opened once it is known not to be an
    /// input), the style.
    fn new(mut args: ScanArgs, config: &Config, color: Color) -> anyhow::Result<Plan> {
        let catalog = config.catalog(&args.patterns)?;
        if args.files.is_empty() {
            if std::io::stdin().is_terminal() {
                anyhow::bail!(
                    "nothing to scan: name a log file or directory, or pipe a log in \
                     (`cudnnlog scan train.log`, `kubectl logs job/x | cudnnlog scan`)"
                );
            }
            args.files.push(PathBuf::from("-"));
        }
        let (mode, skipped) = Mode::of(&args)?;
        let to_file = args.output.is_some();
        if mode.follows_dir() && args.format.is_some_and(|f| f != Format::Ndjson) {
            anyhow::bail!("--follow on a directory writes NDJSON verdicts (`--format ndjson`)");
        }
        let format = args
            .format
            .or(mode.follows_dir().then_some(Format::Ndjson))
            .or_else(|| args.output.as_deref().and_then(Format::of_path))
            .or(config.format)
            .unwrap_or(if std::io::stdout().is_terminal() && !to_file {
                Format::Table
            } else {
                Format::Compact
            });
        let timing = match mode {
            Mode::Follow { .. } | Mode::FollowDir { .. } => Timing::AsItComes,
            Mode::Job(_) | Mode::Fleet(_) => Timing::AtEnd,
        };
        let (out, landing) = output::open(args.output.as_deref(), &mode.reads(), timing)?;
        // Colour and the terminal's width only for a terminal.
        let style = Style {
            color: !to_file && term::color(color, Stream::Stdout),
            width: if to_file {
                term::DEFAULT_WIDTH
            } else {
                term::width(Stream::Stdout)
            },
            verbose: args.verbose,
        };
        let output = Output {
            render: render::renderer(format),
            style,
            out,
            landing,
            to_file,
            format,
            quiet: args.quiet,
        };
        let mmap = if args.no_mmap {
            MmapChoice::never()
        } else {
            // SAFETY: a log being appended to while mapped is fine (we see a
            // prefix); one truncated under us may end the process with SIGBUS.
            // ripgrep accepts the same trade for its default search.
            unsafe { MmapChoice::auto() }
        };
        Ok(Plan {
            catalog,
            mode,
            skipped,
            mmap,
            output,
        })
    }

    /// Scans and writes as planned.
    fn run(self) -> anyhow::Result<Seen> {
        // Never freed: the process ends after the scan, and dropping the
        // catalog's thousands of strings and automata is a tenth of the scan
        // of a small log (a fleet scans thousands).
        let scanner = std::mem::ManuallyDrop::new(ScannerBuilder::new().build(self.catalog));
        let mut output = self.output;
        let skipped = &self.skipped;
        let mut seen = match self.mode {
            Mode::Follow { path, limit } => {
                let live = match output.format {
                    _ if output.silent() => Live::Nothing,
                    Format::Ndjson => Live::Ndjson,
                    Format::Table | Format::Compact | Format::Github => Live::Lines,
                    // One document: written whole at the end.
                    Format::Json
                    | Format::Markdown
                    | Format::Junit
                    | Format::Html
                    | Format::Prometheus => Live::Nothing,
                };
                let notes = !output.quiet;
                let followed =
                    follow::follow(&scanner, &path, live, notes, limit, &mut output.out)?;
                let announced = live != Live::Nothing;
                closing(&scanner, followed, self.mmap, &mut output, announced)?
            }
            Mode::FollowDir {
                dir,
                walk,
                idle,
                limit,
            } => {
                let notes = !output.quiet;
                let mut sink = std::io::sink();
                let out: &mut dyn Write = match output.silent() {
                    true => &mut sink,
                    false => &mut output.out,
                };
                let w = watch::watch(&scanner, &dir, &walk, idle, limit, notes, out)?;
                Seen {
                    unreadable: w.unreadable,
                    finding: w.finding,
                    failure: w.failed,
                    nothing_read: false,
                }
            }
            Mode::Fleet(jobs) => {
                let ctx = Ctx {
                    catalog: scanner.catalog(),
                    style: &output.style,
                    skipped,
                };
                let out = (!output.silent()).then_some(output.out);
                let (render, quiet) = (output.render, output.quiet);
                let done = fleet::run(&scanner, &jobs, self.mmap, render, &ctx, quiet, out)?;
                // A scan stopped by a reader that left leaves jobs
                // untriaged; any other shortfall is an error.
                let missing = !done.closed && jobs.len() as u64 > done.summary.jobs;
                Seen {
                    unreadable: missing || done.summary.unreadable > 0 || done.any_error,
                    finding: done.any_finding,
                    failure: done.summary.failed > 0,
                    nothing_read: false,
                }
            }
            Mode::Job(inputs) => job(&scanner, &inputs, self.mmap, &mut output, skipped)?,
        };
        // A directory the walk could not read is an input not read, as a
        // file would be: named on standard error, and exit 2.
        seen.unreadable |= skipped.get("unreadable").is_some_and(|&n| n > 0);
        if !seen.nothing_read {
            output.landing.land()?;
        }
        Ok(seen)
    }
}

impl Mode {
    /// `--follow`'s one file; else the inputs (walked, their notes on
    /// standard error), as one job or, when they are several jobs' and
    /// `--job` is not given, as a fleet; with what the walk left out, by
    /// reason.
    fn of(args: &ScanArgs) -> anyhow::Result<(Mode, BTreeMap<String, u64>)> {
        if args.follow {
            let [path] = args.files.as_slice() else {
                anyhow::bail!("--follow watches exactly one file or directory");
            };
            let limit = args.follow_for.map(Duration::from_secs_f64);
            let path = path.clone();
            if path.is_dir() {
                let idle = Duration::try_from_secs_f64(args.idle)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .context("--idle takes a positive number of seconds")?;
                let walk = walk_of(args);
                let dir = path;
                return Ok((
                    Mode::FollowDir {
                        dir,
                        walk,
                        idle,
                        limit,
                    },
                    BTreeMap::new(),
                ));
            }
            return Ok((Mode::Follow { path, limit }, BTreeMap::new()));
        }
        let walk = walk_of(args);
        let inputs::Expanded {
            mut inputs,
            notes,
            skipped,
        } = inputs::expand(&args.files, &walk)?;
        for note in notes.iter().filter(|_| !args.quiet) {
            writeln!(
                std::io::stderr(),
                "cudnnlog: {}",
                render::sanitize_line(note)
            )?;
        }
        if inputs.is_empty() {
            let why = render::skips(&skipped).map_or(String::new(), |s| format!("; {s}"));
            anyhow::bail!("no files to scan (the directories hold no log files that match{why})");
        }
        // Grouped from the inputs themselves: no list of their paths is
        // made (a walk may have found hundreds of thousands).
        let files = inputs.iter().filter_map(|i| match i {
            JobInput::File(s) => Some(s.path.as_path()),
            JobInput::Stdin => None,
        });
        let jobs = cudnnlog::fleet::group_paths(files);
        let stdin = inputs.iter().any(|i| matches!(i, JobInput::Stdin));
        let several = jobs.len() + usize::from(stdin) > 1;
        if several && !args.job {
            if stdin {
                anyhow::bail!(
                    "standard input cannot be one job among files of others; \
                     add --job to take all inputs as one job"
                );
            }
            return Ok((Mode::Fleet(jobs), skipped));
        }
        // One job: the ranks its files' names give (with `--job` too: files
        // that are visibly one job's ranks stay ranks, not runs).
        let rank_of: HashMap<&Path, u32> = jobs
            .iter()
            .flat_map(|j| j.sources.iter())
            .filter_map(|s| Some((s.path.as_path(), s.rank?)))
            .collect();
        for input in &mut inputs {
            if let JobInput::File(s) = input {
                s.rank = rank_of.get(s.path.as_path()).copied();
            }
        }
        Ok((Mode::Job(inputs), skipped))
    }

    /// Whether this is `--follow DIR`.
    fn follows_dir(&self) -> bool {
        matches!(self, Mode::FollowDir { .. })
    }

    /// What the scan reads, which its output must not be.
    fn reads(&self) -> Reads<'_> {
        let mut reads = Reads::default();
        match self {
            Mode::Follow { path, .. } if path.as_os_str() == "-" => reads.stdin = true,
            Mode::Follow { path, .. } => reads.files.push(path),
            Mode::FollowDir { dir, .. } => reads.files.push(dir),
            Mode::Job(inputs) => {
                for input in inputs {
                    match input {
                        JobInput::File(s) => reads.files.push(&s.path),
                        JobInput::Stdin => reads.stdin = true,
                    }
                }
            }
            Mode::Fleet(jobs) => {
                let sources = jobs.iter().flat_map(|j| j.sources.iter());
                reads.files.extend(sources.map(|s| s.path.as_path()));
            }
        }
        reads
    }
}

/// The report that closes a follow, written as a scan's (the findings
/// were `announced` as they came: NDJSON adds only its summary): of the
/// file followed as it is at the end, or of the copy of standard input.
/// The scan's exit status comes of it: 1 for an error finding (as
/// `--fail-on` says), 2 when the file cannot be read any more.
fn closing(
    scanner: &Scanner,
    followed: Followed,
    mmap: MmapChoice,
    output: &mut Output,
    announced: bool,
) -> anyhow::Result<Seen> {
    let mut sink = FindingsSink::new(scanner.catalog());
    let scanned = match &followed {
        Followed::File(path) => scanner.scan_path(path, mmap, &mut sink).map(drop),
        Followed::Stdin(copy) => {
            let read = copy.reader()?;
            scanner.scan_reader("<stdin>", read, &mut sink).map(drop)
        }
    };
    let unreadable = scanned.is_err();
    if let Err(err) = scanned {
        let line = render::sanitize_line(&err.to_string());
        writeln!(std::io::stderr(), "cudnnlog: {line}")?;
    }
    let report = sink.into_report();
    let skipped = BTreeMap::new();
    write_job(
        scanner.catalog(),
        output,
        &skipped,
        &report,
        unreadable,
        announced,
    )
}

/// Scans one job's `inputs` into one report (the files in parallel, each
/// into a fork of the report's sink, joined in the order given) and writes
/// it. A format that streams has each finding's first match written as
/// soon as it is seen.
fn job(
    scanner: &Scanner,
    inputs: &[JobInput],
    mmap: MmapChoice,
    output: &mut Output,
    skipped: &BTreeMap<String, u64>,
) -> anyhow::Result<Seen> {
    // Partial findings are streamed to a reader, not to a file.
    let shared = (output.render.streams() && !output.quiet && !output.to_file)
        .then(|| Shared::new(Box::new(std::io::stdout())));
    let hooks = Hooks::new(inputs, shared.clone(), output.quiet);
    let scanned = cudnnlog::fleet::scan_inputs(scanner, inputs, mmap, &hooks);
    if let Some(bar) = hooks.bar {
        bar.finish_and_clear();
    }
    // A truncated or corrupt archive, or a read that failed part way: what
    // was read before it was scanned, and the error is still reported (one
    // line, exit 2), unless output was closed.
    let closed = shared.as_ref().is_some_and(|s| s.closed());
    // Said whatever `--quiet` says, as `grep -q` does.
    let mut unreadable = false;
    for (_, err) in scanned.errors.iter().filter(|_| !closed) {
        unreadable = true;
        let line = render::sanitize_line(&err.to_string());
        writeln!(std::io::stderr(), "cudnnlog: {line}")?;
    }
    if let Some(shared) = shared.as_ref().filter(|s| s.closed()) {
        // The reader left: what was announced decides the status.
        return Ok(Seen {
            unreadable: false,
            finding: shared.announced(),
            failure: shared.saw_error(),
            nothing_read: false,
        });
    }
    let report = scanned.sink.into_report();
    write_job(
        scanner.catalog(),
        output,
        skipped,
        &report,
        unreadable,
        false,
    )
}

/// Writes one job's report as its format does (with `announced`, its
/// findings were written as they came, by `--follow`: a format that streams
/// adds only the summary), unless nothing is to be written (`--quiet`) or
/// nothing could be read (`unreadable`, no source: the error said it all);
/// and what the report comes to, for the exit status.
fn write_job(
    catalog: &Catalog,
    output: &mut Output,
    skipped: &BTreeMap<String, u64>,
    report: &Report,
    unreadable: bool,
    announced: bool,
) -> anyhow::Result<Seen> {
    let seen = Seen {
        unreadable,
        finding: !report.findings.is_empty(),
        failure: report
            .findings
            .iter()
            .any(|f| f.severity == cudnnlog::catalog::Severity::Error),
        // A missing file: "no findings" beside its error would contradict it.
        nothing_read: unreadable && report.sources.is_empty(),
    };
    if output.silent() || seen.nothing_read {
        return Ok(seen);
    }
    let ctx = Ctx {
        catalog,
        style: &output.style,
        skipped,
    };
    let mut out = std::io::BufWriter::new(&mut output.out);
    let written = if announced && output.render.streams() {
        let summary = cudnnlog::ndjson::JobSummary::of(report);
        cudnnlog::ndjson::Message::Summary(summary)
            .write_line(&mut out)
            .map_err(anyhow::Error::from)
    } else {
        output.render.report(&mut out, &ctx, report)
    };
    let written = written.and_then(|()| Ok(out.flush()?));
    match written {
        // The reader has what it wanted (`| head`): the findings decide.
        Err(e) if crate::is_broken_pipe(&e) => Ok(seen),
        Err(e) => Err(e),
        Ok(()) => Ok(seen),
    }
}

/// What the CLI adds to the library's scan of one job: NDJSON's partial
/// findings, announced as they are seen ([`Streaming`]), and a progress
/// bar for large files.
struct Hooks {
    /// What the streaming forks share; `None`: nothing is streamed.
    shared: Option<Arc<Shared>>,
    /// One file's bar, or one bar for several files over their total size.
    bar: Option<indicatif::ProgressBar>,
    /// The bar is one file's own: its position is the bytes read.
    single: bool,
    /// Each file's share of a several-file bar so far.
    counted: Vec<AtomicU64>,
}

impl Hooks {
    fn new(inputs: &[JobInput], shared: Option<Arc<Shared>>, quiet: bool) -> Hooks {
        let single = inputs.len() == 1;
        let files = inputs.iter().filter_map(|i| match i {
            JobInput::File(s) => Some(s.path.as_path()),
            JobInput::Stdin => None,
        });
        let bar = if single {
            match &inputs[0] {
                JobInput::File(s) => progress_bar(&s.path, quiet),
                JobInput::Stdin => None,
            }
        } else {
            progress_bar_many(files, quiet)
        };
        Hooks {
            shared,
            bar,
            single,
            counted: inputs.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl<'c> ScanHooks<'c> for Hooks {
    type Sink = Streaming<'c>;

    fn sink(&self, _: usize, input: &JobInput, fork: FindingsSink<'c>) -> Streaming<'c> {
        let mut sink = Streaming::new(fork, self.shared.clone());
        sink.path = input.name();
        sink
    }

    fn findings(&self, sink: Streaming<'c>) -> FindingsSink<'c> {
        sink.inner
    }

    fn progress(&self, index: usize, done: u64) {
        let Some(bar) = &self.bar else {
            return;
        };
        if self.single {
            bar.set_position(done);
        } else {
            let before = self.counted[index].fetch_max(done, Ordering::Relaxed);
            bar.inc(done.saturating_sub(before));
        }
    }

    fn parallel(&self) -> bool {
        true
    }
}

/// Files larger than this get a progress bar on a terminal.
const PROGRESS_MIN_BYTES: u64 = 256 << 20;

/// A progress bar on standard error for a large file, when standard error
/// is a terminal and `--quiet` is not given.
fn progress_bar(path: &Path, quiet: bool) -> Option<indicatif::ProgressBar> {
    let len = std::fs::metadata(path).ok()?.len();
    bar(
        len,
        render::sanitize_line(&path.display().to_string()),
        quiet,
    )
}

/// One progress bar for several files together, over their total size.
fn progress_bar_many<'p>(
    paths: impl Iterator<Item = &'p Path>,
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

/// The walk of directories the arguments ask for.
fn walk_of(args: &ScanArgs) -> cudnnlog::source::Walk {
    cudnnlog::source::Walk {
        globs: args.glob.clone(),
        max_depth: args.max_depth,
        hidden: args.hidden,
        no_ignore: args.no_ignore,
    }
}
