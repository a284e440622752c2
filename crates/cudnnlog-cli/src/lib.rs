//! `cudnnlog`: the command-line front end. Parsing arguments, choosing an
//! output format and exit code; everything else is the library's.
//!
//! A library only so that the fuzz targets (`fuzz/`) can reach the config
//! reader and the HTML page; the binary (`src/main.rs`) calls [`main`].
//! Nothing here is a stable API: use the `cudnnlog` crate.

use anyhow::Context;
use args::{Cli, Command, PatternsCommand};
use clap::{CommandFactory, Parser};
use cmd::patterns;
use cudnnlog::{Catalog, CatalogBuilder};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

mod args;
mod cmd;
mod config;
mod inputs;
mod output;
mod render;
mod stream_sink;
mod term;

/// The `cudnnlog` command: parses `std::env::args`, runs, and returns
/// the exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = config::load().and_then(|config| {
        let color = cli.color.or(config.color).unwrap_or(term::Color::Auto);
        dispatch(cli.command, &config, color)
    });
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "cudnnlog: {}", one_line(&err));
            ExitCode::from(2)
        }
    }
}

fn dispatch(
    command: Command,
    config: &config::Config,
    color: term::Color,
) -> anyhow::Result<ExitCode> {
    match command {
        Command::Scan(args) => cmd::scan::scan(args, config, color),
        Command::Run(args) => cmd::run::main(&args, color),
        Command::Explain {
            id,
            format,
            patterns,
        } => patterns::explain(&id, format, config.catalog(&patterns)?),
        Command::Completions { shell } => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(shell, &mut Cli::command(), "cudnnlog", &mut out);
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Patterns(PatternsCommand::List {
            format,
            class,
            patterns,
        }) => patterns::list(format, class.as_deref(), &patterns),
        Command::Patterns(PatternsCommand::Check { dirs }) => patterns::check(&dirs),
        Command::Patterns(PatternsCommand::Suggest { files, top, out }) => {
            patterns::suggest(&files, top, out.as_deref())
        }
    }
}

/// An error and its causes on one line, `context: error: cause`, each
/// cause left out when the message before it already ends with it (an
/// error that shows its source too, as the library's `path: reason` does:
/// the reason was printed twice).
fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for e in err.chain() {
        let text = e.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    render::sanitize_line(&line)
}

/// Whether an error is the reader of our output going away (`| head`).
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

fn load_catalog(dirs: &[PathBuf]) -> anyhow::Result<Catalog> {
    let mut builder = CatalogBuilder::new();
    for dir in dirs {
        builder.add_dir(dir);
    }
    builder.build().context("cannot load the pattern catalog")
}

/// Entry points for the fuzz targets in `fuzz/` (not an API: they change
/// with the command).
#[doc(hidden)]
pub mod fuzzing {
    use cudnnlog::fleet::{FleetDocument, Job};
    use cudnnlog::{Catalog, MmapChoice, Report, Scanner};

    /// The config file at `path` read as `CUDNNLOG_CONFIG` names it: its
    /// pattern directories, or the one line the command prints.
    pub fn config_file(path: &std::path::Path) -> Result<Vec<std::path::PathBuf>, String> {
        crate::config::from_file(path, true)
            .map(|c| c.patterns)
            .map_err(|e| crate::one_line(&e))
    }

    /// The page `scan --format html` writes for one job's report.
    pub fn html_report(report: &Report, catalog: &Catalog) -> String {
        render(catalog, &PLAIN, |r, out, ctx| r.report(out, ctx, report))
    }

    /// The page `scan --format html DIR` writes for a fleet of jobs.
    pub fn html_fleet(scanner: &Scanner, jobs: &[Job]) -> String {
        let done: Vec<_> = jobs
            .iter()
            .map(|job| cudnnlog::fleet::scan_job(scanner, job, MmapChoice::never()))
            .collect();
        let mut summary = cudnnlog::fleet::Summary::default();
        for t in &done {
            summary.add(&t.verdict);
        }
        let document = FleetDocument {
            schema: cudnnlog::fleet::SCHEMA,
            jobs: done,
            summary: summary.finish(),
        };
        let style = PLAIN;
        render(scanner.catalog(), &style, |r, out, ctx| {
            r.fleet(out, ctx, &document)
        })
    }

    const PLAIN: crate::render::Style = crate::render::Style {
        color: false,
        width: 100,
        verbose: false,
    };

    fn render(
        catalog: &Catalog,
        style: &crate::render::Style,
        f: impl FnOnce(
            &dyn crate::render::Render,
            &mut dyn std::io::Write,
            &crate::render::Ctx<'_>,
        ) -> anyhow::Result<()>,
    ) -> String {
        let skipped = Default::default();
        let ctx = crate::render::Ctx {
            catalog,
            style,
            skipped: &skipped,
        };
        let mut out = Vec::new();
        f(
            crate::render::renderer(crate::args::Format::Html),
            &mut out,
            &ctx,
        )
        .expect("rendering into memory");
        String::from_utf8(out).expect("the page is UTF-8")
    }
}
