//! `cudnnlog`: the command-line front end. Parsing arguments, choosing an
//! output format and exit code; everything else is the library's.

use anyhow::Context;
use args::{Cli, Command, ExplainFormat, ListFormat, PatternsCommand};
use clap::{CommandFactory, Parser};
use cudnnlog::catalog::Pattern;
use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, CatalogBuilder, MmapChoice, ScannerBuilder};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

mod args;
mod catalog_cmd;
mod config;
mod fleet_cmd;
mod follow;
mod inputs;
mod render;
mod run_cmd;
mod scan_cmd;
mod stream_sink;
mod term;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = config::load().and_then(|config| {
        let color = cli.color.or(config.color).unwrap_or(term::Color::Auto);
        dispatch(cli.command, &config, color)
    });
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "cudnnlog: {}",
                render::sanitize_line(&format!("{err:#}"))
            );
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
        Command::Scan(args) => scan_cmd::scan(args, config, color),
        Command::Run { log, cmd } => run_cmd::main(&cmd, log.as_deref(), color),
        Command::Explain {
            id,
            format,
            patterns,
        } => {
            let mut dirs = config.patterns.clone();
            dirs.extend(patterns);
            explain(&id, format, &dirs)
        }
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
        }) => list(format, class.as_deref(), &patterns),
        Command::Patterns(PatternsCommand::Check { dirs }) => check(&dirs),
        Command::Patterns(PatternsCommand::Suggest { files, top, out }) => {
            suggest(&files, top, out.as_deref())
        }
    }
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

fn explain(id: &str, format: ExplainFormat, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(dirs)?;
    let unknown = || {
        let similar = catalog_cmd::similar_ids(&catalog, id);
        let hint = if similar.is_empty() {
            "; `cudnnlog patterns list` shows the patterns".to_string()
        } else {
            format!("; did you mean {}?", similar.join(", "))
        };
        anyhow::anyhow!("no class, cause or pattern has the id {id:?}{hint}")
    };
    let mut out = std::io::stdout().lock();
    match format {
        ExplainFormat::Text => {
            let text = catalog_cmd::explain(&catalog, id).ok_or_else(unknown)?;
            out.write_all(text.as_bytes())?;
        }
        ExplainFormat::Json => {
            let value = catalog_cmd::explain_json(&catalog, id).ok_or_else(unknown)?;
            cudnnlog::json::pretty(&mut out, &value)?;
            writeln!(out)?;
        }
    }
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
            cudnnlog::json::pretty(&mut out, &catalog_cmd::list_json(&patterns))?;
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
    for path in files {
        // Read, not mapped: this is a one-off look at a few logs.
        scanner
            .scan_path(path, MmapChoice::never(), &mut sink)
            .with_context(|| format!("cannot scan {}", path.display()))?;
    }
    let report = sink.into_report();
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
                    render::sanitize_line(&path.display().to_string())
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
    let failures = cudnnlog::catalog::check_patterns(&catalog, |p| mine(p));
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
