//! The command line: what clap parses.

use crate::term::Color;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Reads deep-learning training logs and says what went wrong, why, and what to do.
#[derive(Parser)]
#[command(name = "cudnnlog", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour: auto colours a terminal unless NO_COLOR is set or
    /// TERM=dumb (CLICOLOR_FORCE colours a pipe too). Default from
    /// CUDNNLOG_COLOR or the config file.
    #[arg(long, value_enum, global = true, value_name = "WHEN")]
    pub color: Option<Color>,
}

#[derive(Subcommand)]
pub enum Command {
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
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
        format: ExplainFormat,
        /// Add the patterns in this directory to the built-in catalog.
        #[arg(long = "patterns", value_name = "DIR")]
        patterns: Vec<PathBuf>,
    },
    /// Run a command, pass its output through, keep a copy, and diagnose it
    /// when it exits; the exit status is the command's (128+N for signal N).
    Run(RunArgs),
    /// List or check the pattern catalog.
    #[command(subcommand)]
    Patterns(PatternsCommand),
    /// Print a shell completion script: `cudnnlog completions bash >
    /// ~/.local/share/bash-completion/completions/cudnnlog`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on standard output: `cudnnlog man |
    /// man -l -`.
    Man,
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Keep the copy of the output here (default: a temporary file,
    /// removed afterwards).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Write the diagnosis as one line (at most 4096 bytes, no control
    /// characters) to this file when the command exits, as Kubernetes
    /// reads a container's `terminationMessagePath`
    /// (`/dev/termination-log`).
    #[arg(long, value_name = "FILE")]
    pub termination_log: Option<PathBuf>,
    /// When the command fails, exit with the status its diagnosis's action
    /// maps to: 75 for `retry`, 78 for `stop`, the command's own for
    /// `investigate` (for a Kubernetes `podFailurePolicy`). Without a
    /// command, print the table.
    #[arg(long)]
    pub exit_code_map: bool,
    /// The command and its arguments, after `--`.
    #[arg(
        required_unless_present = "exit_code_map",
        last = true,
        value_name = "CMD"
    )]
    pub cmd: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// What, why, how to fix, an example, as text.
    Text,
    /// The class, cause or pattern as a JSON object.
    Json,
}

#[derive(Subcommand)]
pub enum PatternsCommand {
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
pub enum ListFormat {
    Table,
    Json,
    /// Every distinct anchor (patterns and environment probes), one per
    /// line: the literal list a benchmark hands to `rg -F -f`.
    Anchors,
}

#[derive(clap::Args)]
pub struct ScanArgs {
    /// Log files or directories (walked recursively) to read; `-` reads
    /// standard input, as does no path when standard input is not a
    /// terminal. gzip and zstd files are decompressed.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Watch one growing file (`tail -F`: truncation and rotation are
    /// handled, a file not there yet is waited for) and report each new
    /// finding as it appears; `-` follows standard input until it ends.
    /// With `--format ndjson`, a JSON object per finding. On Ctrl-C (or
    /// the input's end) the report follows, and the exit status is a
    /// scan's. On a directory: one NDJSON verdict line per job as each job
    /// ends (`--idle`), for log shippers; until Ctrl-C or SIGTERM.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Stop following after this many seconds (for scripts and tests).
    #[arg(long, value_name = "SECS", hide = true)]
    pub follow_for: Option<f64>,
    /// With `--follow DIR`: a job has ended once none of its files has
    /// changed for this many seconds; its verdict is then written.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, requires = "follow")]
    pub idle: f64,
    /// In directories, only files that match this glob (`*.log*`,
    /// `rank*.txt`); `!GLOB` excludes. May be repeated (rg's syntax).
    #[arg(long, short = 'g', value_name = "GLOB")]
    pub glob: Vec<String>,
    /// Walk directories at most this deep (1: a directory's own files).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<usize>,
    /// Walk hidden files and directories too.
    #[arg(long)]
    pub hidden: bool,
    /// Do not read `.gitignore`, `.ignore` or `.cudnnlogignore` files.
    #[arg(long)]
    pub no_ignore: bool,
    /// Take every input as one job: one report across all files, with
    /// fallout and culprits across them. Without it, each file is its own
    /// job (a verdict each), except the ranks or streams of one job
    /// (`rank0.log`, `rank1.log`; torchrun's `attempt_0/<rank>/stderr.log`).
    #[arg(long)]
    pub job: bool,
    /// Output format (default: `table` on a terminal, `compact` in a pipe,
    /// or what `--output`'s extension names; CUDNNLOG_FORMAT or the config
    /// file may set another).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write the report to this file instead of standard output; without
    /// `--format`, its extension chooses (`.html`, `.md`, `.json`,
    /// `.ndjson`, `.xml`).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Add the patterns in this directory to the built-in catalog (a pattern
    /// with a built-in id replaces it). May be repeated.
    #[arg(long = "patterns", value_name = "DIR")]
    pub patterns: Vec<PathBuf>,
    /// Read files instead of memory-mapping them.
    #[arg(long)]
    pub no_mmap: bool,
    /// Print nothing on standard output: the exit status says it all. A
    /// report file (`-o`) is still written, and errors still said on
    /// standard error, as `grep -q` says them.
    #[arg(long, short)]
    pub quiet: bool,
    /// Show everything: every cause and remediation, whole messages.
    #[arg(long, short)]
    pub verbose: bool,
    /// Exit 1 when a finding is at least this severe: `error` (the
    /// default), `warning` (any finding), or `never` (always 0 unless a
    /// file could not be read).
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Never,
    Warning,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// The answer first (what failed, why, what to do), then the details,
    /// sized to the terminal.
    Table,
    /// A line per finding (`path:line: severity class: message`), then the
    /// verdict's lines: for pipes, grep and editors.
    Compact,
    /// One JSON document (schema cudnnlog.report/1).
    Json,
    /// One JSON object per line: findings, then a summary.
    Ndjson,
    /// A report to paste into an issue or incident ticket.
    Markdown,
    /// GitHub Actions workflow commands: an annotation per finding, on
    /// its file and line.
    Github,
    /// JUnit XML: a test case per job, failed when the job failed.
    Junit,
    /// One self-contained HTML page for a post-mortem: the verdict, a
    /// timeline of every finding per rank, the findings with the log around
    /// them.
    Html,
    /// Prometheus metrics (text exposition format): jobs by outcome, by
    /// primary class and by action, for node_exporter's textfile collector.
    Prometheus,
}

impl Format {
    /// The format a file name's extension names (`report.html`).
    pub fn of_path(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "html" | "htm" => Format::Html,
            "md" | "markdown" => Format::Markdown,
            "json" => Format::Json,
            "ndjson" | "jsonl" => Format::Ndjson,
            "xml" => Format::Junit,
            "txt" | "log" => Format::Compact,
            "prom" => Format::Prometheus,
            _ => return None,
        })
    }
}
