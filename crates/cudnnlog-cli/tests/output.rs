//! What a user sees: the answer first and sized to the terminal, compact
//! lines in a pipe, `-q`, colour conventions, a reader that leaves early,
//! completions, the manual page, the config file and its variables.

mod common;

use common::{cudnnlog, root};
use std::process::{Command, Stdio};

const OOM: &str = "fixtures/real/h200-torch-oom-amp-train.log";
const WATCHDOG: &str = "fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log";

fn with_env(args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> std::process::Output {
    common::cudnnlog_env(args, env, stdin)
}

/// Display width, as a terminal counts it (every character here is one
/// column wide).
fn width(line: &str) -> usize {
    line.chars().count()
}

/// At 80 columns the real out-of-memory and two-GPU watchdog reports have
/// no line wider than 80, and their first 8 lines name the primary class
/// and what to do; the remediation's command is whole on a line.
#[test]
fn the_answer_comes_first_and_fits_80_columns() {
    for (log, class) in [(OOM, "cuda.oom"), (WATCHDOG, "nccl.timeout")] {
        let out = with_env(
            &["scan", "--format", "table", log],
            &[("COLUMNS", "80")],
            None,
        );
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines() {
            assert!(width(line) <= 80, "{log}: {} columns: {line}", width(line));
        }
        let head: Vec<&str> = text.lines().take(8).collect();
        assert!(
            head[0].starts_with(&format!("primary failure: {class} — ")),
            "{head:#?}"
        );
        assert!(head.iter().any(|l| l.starts_with("  fix: ")), "{head:#?}");
        assert!(head.iter().any(|l| l.starts_with("  why: ")), "{head:#?}");
    }
    let oom = with_env(
        &["scan", "--format", "table", OOM],
        &[("COLUMNS", "80")],
        None,
    );
    let text = String::from_utf8(oom.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.trim() == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
        "{text}"
    );
    // The watchdog's culprit is in the verdict.
    let dog = with_env(
        &["scan", "--format", "table", WATCHDOG],
        &[("COLUMNS", "80")],
        None,
    );
    let text = String::from_utf8(dog.stdout).unwrap();
    assert!(
        text.lines()
            .take(8)
            .any(|l| l.starts_with("  who:  ") || l.starts_with("  who: rank 1")),
        "{text}"
    );
}

/// A wider terminal gets longer lines, never wider than itself; `-v`
/// shows every cause and remediation.
#[test]
fn width_follows_the_terminal_and_verbose_shows_everything() {
    let wide = with_env(
        &["scan", "--format", "table", OOM],
        &[("COLUMNS", "140")],
        None,
    );
    let text = String::from_utf8(wide.stdout).unwrap();
    assert!(text.lines().all(|l| width(l) <= 140));
    assert!(text.lines().any(|l| width(l) > 80), "{text}");
    let short =
        String::from_utf8(cudnnlog(&["scan", "--format", "table", OOM], None).stdout).unwrap();
    let all = String::from_utf8(cudnnlog(&["scan", "--format", "table", "-v", OOM], None).stdout)
        .unwrap();
    assert!(short.contains("more with -v") && !all.contains("more with -v"));
    let json: cudnnlog::Report =
        serde_json::from_slice(&cudnnlog(&["scan", "--format", "json", OOM], None).stdout).unwrap();
    for r in &json.findings[0].remediations {
        let first_words: String = r.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        let flat = all.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&first_words.replace('`', "")) || flat.contains(&first_words),
            "{first_words}"
        );
    }
}

/// Piped without `--format`: a line per finding and the verdict's lines,
/// no box drawing; `--format table` still draws.
#[test]
fn a_pipe_gets_compact_lines() {
    let out = cudnnlog(&["scan", WATCHDOG], None);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(['─', '│', '┌', '●']), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "{WATCHDOG}:14: error nccl.timeout: [Rank 0] Watchdog caught"
        )),
        "{text}"
    );
    assert!(
        lines.contains(&"primary: nccl.timeout — collective operation timed out"),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("culprit: rank 1: ")),
        "{text}"
    );
    assert!(lines.iter().any(|l| l.starts_with("fix: ")), "{text}");
    let clean = cudnnlog(
        &["scan", "fixtures/real/h200-torch-healthy-train.log"],
        None,
    );
    assert_eq!(String::from_utf8(clean.stdout).unwrap(), "no findings\n");
}

/// `-q` prints nothing, on either stream; the exit status still speaks.
#[test]
fn quiet_prints_nothing() {
    for args in [
        vec!["scan", "-q", OOM],
        vec!["scan", "-q", "--format", "ndjson", OOM],
        vec!["scan", "-q", "fixtures/real"],
    ] {
        let out = cudnnlog(&args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{args:?}: {out:?}"
        );
    }
}

/// Colour in one place: `--color` on every command, `NO_COLOR`,
/// `CLICOLOR_FORCE`, `TERM=dumb`.
#[test]
fn colour_conventions() {
    let table = ["scan", "--format", "table", OOM];
    let colored = |env: &[(&str, &str)], extra: &[&str]| {
        let mut args: Vec<&str> = table.to_vec();
        args.extend_from_slice(extra);
        let out = with_env(&args, env, None);
        out.stdout.contains(&0x1b)
    };
    assert!(!colored(&[], &[]), "a pipe is not coloured");
    assert!(colored(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!colored(
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        &["--color", "never"]
    ));
    assert!(colored(&[("NO_COLOR", "1")], &["--color", "always"]));
    assert!(colored(&[("CUDNNLOG_COLOR", "always")], &[]));
    assert!(!colored(
        &[("CUDNNLOG_COLOR", "always")],
        &["--color", "never"]
    ));
    // A global flag: accepted before the subcommand too.
    let out = with_env(
        &["--color", "always", "scan", "--format", "table", OOM],
        &[],
        None,
    );
    assert!(out.stdout.contains(&0x1b));
}

/// A reader that leaves early (`| head -1`): the scan stops, no error
/// message, and the exit status is the findings'.
#[test]
fn a_reader_that_leaves_ends_the_scan_quietly() {
    let oom = std::fs::read(root().join(OOM)).unwrap();
    let mut big = Vec::new();
    while big.len() < 8 << 20 {
        big.extend_from_slice(&oom);
    }
    let path = std::env::temp_dir().join(format!("cudnnlog-head-{}.log", std::process::id()));
    std::fs::write(&path, &big).unwrap();
    for format in ["ndjson", "json", "compact", "table"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cudnnlog"))
            .args(["scan", "--format", format, path.to_str().unwrap()])
            .env("CUDNNLOG_CONFIG", "")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close the pipe.
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        use std::io::Read;
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(
            out.stderr.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// `completions SHELL` and `man` print what shells and man read.
#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let out = cudnnlog(&["completions", shell], None);
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("cudnnlog") && text.contains("scan"),
            "{shell}"
        );
    }
    let man = String::from_utf8(cudnnlog(&["man"], None).stdout).unwrap();
    assert!(
        man.contains(".TH cudnnlog 1") && man.contains("scan"),
        "{man}"
    );
}

/// The config file sets defaults, `CUDNNLOG_*` variables override it,
/// flags override both; a broken file is a clear error.
#[test]
fn config_file_and_environment() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-config-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("cudnnlog")).unwrap();
    let file = dir.join("cudnnlog/config.toml");
    std::fs::write(&file, "format = \"json\"\n").unwrap();
    let xdg = [("XDG_CONFIG_HOME", dir.to_str().unwrap())];
    let out = |env: &[(&str, &str)], extra: &[&str]| {
        let mut env: Vec<(&str, &str)> = env.to_vec();
        env.extend_from_slice(&xdg);
        let mut args = vec!["scan"];
        args.extend_from_slice(extra);
        args.push(OOM);
        // An unset CUDNNLOG_CONFIG: the XDG file is read.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudnnlog"));
        cmd.args(&args)
            .current_dir(root())
            .env_remove("CUDNNLOG_CONFIG")
            .env_remove("CUDNNLOG_FORMAT");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    assert!(out(&[], &[]).starts_with("{\n  \"schema\": \"cudnnlog.report/1\""));
    assert!(out(&[("CUDNNLOG_FORMAT", "ndjson")], &[])
        .starts_with("{\"type\":\"finding\",\"partial\":true,"));
    assert!(out(&[("CUDNNLOG_FORMAT", "ndjson")], &["--format", "compact"]).starts_with(OOM));
    // Pattern directories from the file, relative to it.
    std::fs::create_dir_all(dir.join("cudnnlog/mine")).unwrap();
    std::fs::write(&file, "patterns = [\"mine\"]\n").unwrap();
    let listed = with_env(
        &["patterns", "list", "--format", "json"],
        &[("CUDNNLOG_CONFIG", file.to_str().unwrap())],
        None,
    );
    assert_eq!(
        listed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    std::fs::write(&file, "colour = \"never\"\n").unwrap();
    let bad = with_env(
        &["scan", OOM],
        &[("CUDNNLOG_CONFIG", file.to_str().unwrap())],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("bad config file") && err.contains("config.toml"),
        "{err}"
    );
    let bad_env = with_env(&["scan", OOM], &[("CUDNNLOG_FORMAT", "xml")], None);
    assert_eq!(bad_env.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `explain --format json` and "did you mean" for a typo.
#[test]
fn explain_as_json_and_typos() {
    let out = cudnnlog(&["explain", "--format", "json", "cuda.oom"], None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["kind"].as_str(), v["id"].as_str()),
        (Some("class"), Some("cuda.oom"))
    );
    assert!(v["causes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["id"] == "fragmentation"));
    let cause: serde_json::Value = serde_json::from_slice(
        &cudnnlog(&["explain", "--format", "json", "fragmentation"], None).stdout,
    )
    .unwrap();
    assert_eq!(cause["kind"], "cause");
    let typo = cudnnlog(&["explain", "fragmentaton"], None);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8(typo.stderr)
        .unwrap()
        .contains("did you mean fragmentation?"));
}

/// On a real terminal of 80 columns (a pty made by util-linux's `script`):
/// table and colour without being asked, no line wider than 80 once the
/// colour codes are removed.
#[test]
fn on_a_pty_of_80_columns() {
    assert!(
        Command::new("script").arg("--version").output().is_ok(),
        "this test needs util-linux's `script` (Debian's bsdutils) to make a pty"
    );
    for log in [OOM, WATCHDOG] {
        let inner = format!(
            "stty cols 80 rows 50; CUDNNLOG_CONFIG= {} scan {log}",
            env!("CARGO_BIN_EXE_cudnnlog")
        );
        let out = Command::new("script")
            .args(["-qec", &inner, "/dev/null"])
            .current_dir(root())
            .env_remove("NO_COLOR")
            .env_remove("COLUMNS")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let raw = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        assert!(raw.contains("\x1b["), "a terminal is coloured: {raw}");
        let plain = strip_ansi(&raw);
        for line in plain.lines() {
            assert!(width(line) <= 80, "{log}: {} columns: {line}", width(line));
        }
        let head: Vec<&str> = plain.lines().take(8).collect();
        assert!(head[0].starts_with("primary failure: "), "{head:#?}");
        assert!(head.iter().any(|l| l.starts_with("  fix: ")), "{head:#?}");
    }
}

/// The text without SGR colour codes.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// CI formats from the command line: a GitHub annotation per finding on
/// its file and line; JUnit with a test case per job of a fleet.
#[test]
fn github_and_junit_formats() {
    let gh = cudnnlog(&["scan", "--format", "github", OOM], None);
    assert_eq!(gh.status.code(), Some(1));
    let text = String::from_utf8(gh.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with(&format!("::error file={OOM},line=29,title=cuda.oom")),
        "{text}"
    );
    let junit = cudnnlog(&["scan", "--format", "junit", "fixtures/real"], None);
    assert_eq!(junit.status.code(), Some(1));
    let xml = String::from_utf8(junit.stdout).unwrap();
    assert!(
        xml.contains("<testsuite name=\"cudnnlog\" tests=\"10\" failures=\"6\""),
        "{xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 10);
    assert_eq!(xml.matches("<failure ").count(), 6);
}

/// A newline in a file name cannot forge a line of output, and bidi
/// overrides or zero-width characters from a log or a name never reach
/// the output (in any human format).
#[test]
fn names_and_text_cannot_forge_or_reorder_output() {
    let forged = "x\ncudnnlog: forged";
    let out = cudnnlog(&["scan", forged], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("cudnnlog: forged")),
        "{err}"
    );

    let dir = std::env::temp_dir().join(format!("cudnnlog-forge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join("job\n-\u{202e}gol.1.txt");
    std::fs::write(
        &name,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 \u{202e}BiG\u{200b}. GPU 0\n",
    )
    .unwrap();
    std::fs::copy(root().join(OOM), dir.join("job-2.log")).unwrap();
    for (target, formats) in [
        (
            name.to_str().unwrap(),
            &["table", "compact", "markdown"][..],
        ),
        (dir.to_str().unwrap(), &["table", "compact", "markdown"][..]),
    ] {
        for format in formats {
            let out = cudnnlog(&["scan", "--format", format, target], None);
            let text = String::from_utf8(out.stdout).unwrap();
            for bad in ['\u{202e}', '\u{200b}'] {
                assert!(!text.contains(bad), "{format} {target:?}: {text}");
            }
            assert!(
                !text
                    .lines()
                    .any(|l| l.starts_with("-\u{fffd}gol") || l.starts_with("-gol")),
                "{format}: a name's newline made a line: {text}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Exit 2 with one line on standard error that names `named`, and the
/// file at `path` still holds `before`.
fn refused_and_untouched(
    out: &std::process::Output,
    named: &str,
    path: &std::path::Path,
    before: &[u8],
) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cudnnlog: --output ") && err.contains(named),
        "{err}"
    );
    assert!(err.contains("is an input of the scan"), "{err}");
    assert_eq!(std::fs::read(path).unwrap(), before, "{}", path.display());
}

/// `-o` naming a log the scan reads is refused before anything is opened
/// for writing, however the log is reached: found by walking a directory,
/// through a symlink or a hard link, as standard input, or as
/// `/proc/self/fd/0`. The log is left whole.
#[test]
fn output_never_overwrites_an_input() {
    let s = common::Scratch::new("output-input");
    let rank0 = s.copy(OOM, "logs/rank0.log");
    s.copy(
        "fixtures/real/h200-torch-healthy-train.log",
        "logs/rank1.log",
    );
    let before = std::fs::read(&rank0).unwrap();
    let logs = s.0.join("logs");
    let scan_dir = |output: &std::path::Path| {
        cudnnlog(
            &[
                "scan",
                logs.to_str().unwrap(),
                "-o",
                output.to_str().unwrap(),
            ],
            None,
        )
    };
    let target = rank0.to_str().unwrap();
    // A file the walk of a directory finds.
    refused_and_untouched(&scan_dir(&rank0), target, &rank0, &before);
    // The same file under other names: the message names both.
    let alias = s.0.join("alias.log");
    std::os::unix::fs::symlink(&rank0, &alias).unwrap();
    let out = scan_dir(&alias);
    refused_and_untouched(&out, target, &rank0, &before);
    assert!(String::from_utf8_lossy(&out.stderr).contains("alias.log"));
    let hard = s.0.join("hard.log");
    std::fs::hard_link(&rank0, &hard).unwrap();
    refused_and_untouched(&scan_dir(&hard), "hard.log", &rank0, &before);
    // Standard input: `cudnnlog scan -o in.log < in.log`, with and without `-`.
    let stdin_scan = |args: &[&str]| {
        common::command(args)
            .stdin(std::fs::File::open(&rank0).unwrap())
            .output()
            .unwrap()
    };
    for args in [
        &["scan", "-o", target][..],
        &["scan", "-", "-o", target],
        &["scan", "-o", "/proc/self/fd/0"],
        &["scan", "-o", "/dev/stdin"],
    ] {
        let out = stdin_scan(args);
        refused_and_untouched(&out, args[args.len() - 1], &rank0, &before);
        assert!(String::from_utf8_lossy(&out.stderr).contains("(standard input)"));
    }
    // Followed, too.
    let out = cudnnlog(
        &["scan", "-f", target, "--follow-for", "0.1", "-o", target],
        None,
    );
    refused_and_untouched(&out, target, &rank0, &before);
}

/// The report is written beside its target and renamed into place once
/// it is whole: an existing report is replaced (a hard link to the old one
/// still holds it), keeps its mode and the link that named it; a scan
/// killed part way leaves the old report as it was.
#[test]
fn output_lands_by_rename() {
    use std::os::unix::fs::PermissionsExt;
    let s = common::Scratch::new("output-rename");
    let report = s.write("out/report.json", b"{\"old\": true}\n");
    let keep = s.0.join("out/keep.json");
    std::fs::hard_link(&report, &keep).unwrap();
    std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = cudnnlog(&["scan", OOM, "-o", report.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let written: cudnnlog::Report =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(written.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(std::fs::read(&keep).unwrap(), b"{\"old\": true}\n");
    let mode = std::fs::metadata(&report).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    // Nothing left beside it.
    let mut names: Vec<String> = std::fs::read_dir(s.0.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.json", "report.json"]);
    // Through a symlink: the link stays, its target gets the report.
    let link = s.0.join("latest.md");
    std::os::unix::fs::symlink(&keep, &link).unwrap();
    let out = cudnnlog(
        &[
            "scan",
            OOM,
            "--format",
            "markdown",
            "-o",
            link.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&keep)
        .unwrap()
        .starts_with("## cudnnlog report"));
    // A new file in the very directory being scanned is fine.
    let logs = s.0.join("logs");
    s.copy(OOM, "logs/rank0.log");
    let new = logs.join("report.log");
    let out = cudnnlog(
        &["scan", logs.to_str().unwrap(), "-o", new.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(std::fs::read_to_string(&new).unwrap().contains("cuda.oom"));
    // Killed part way through reading its input: the old report stands.
    let mut child = common::command(&["scan", "--format", "json", "-o", report.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::Write;
    stdin
        .write_all(&std::fs::read(root().join(OOM)).unwrap())
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    assert_eq!(
        serde_json::from_slice::<cudnnlog::Report>(&std::fs::read(&report).unwrap())
            .unwrap()
            .primary
            .as_deref(),
        Some("cuda.oom"),
        "the report of the first scan"
    );
}

/// A special file is written where it is, never replaced: `/dev/null`
/// stays the null device, `/dev/stdout` is standard output.
#[test]
fn output_to_a_special_file_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let out = cudnnlog(&["scan", OOM, "-o", "/dev/null"], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device());
    let out = cudnnlog(
        &["scan", OOM, "--format", "json", "-o", "/dev/stdout"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(common::json(&out).primary.as_deref(), Some("cuda.oom"));
}
