//! The config file and the `CUDNNLOG_*` variables on hostile input: a file
//! named that cannot be used is an error naming it (exit 2, one line), as
//! `rg` does with `RIPGREP_CONFIG_PATH`; it is read in bounded memory and
//! time whatever it is (a FIFO, a device, `/proc/self/pagemap`, 200 MiB);
//! an error quotes at most a short excerpt of a value, on one line.

mod common;

use common::{command, wait_at_most, Scratch};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;
use std::time::Duration;

const OOM: &str = "fixtures/real/h200-torch-oom-amp-train.log";

/// What a bounded run of the binary came to.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

/// The address space the binary runs in here: a config read whole (200
/// MiB) or without end (`/proc/self/pagemap`) fails to allocate and
/// aborts. A scan that refuses its config needs less than 32 MiB.
const ADDRESS_SPACE: u64 = 64 << 20;

/// Runs `cmd` in [`ADDRESS_SPACE`], waiting at most `limit` (then it is
/// killed and the test fails: a hang).
fn bounded(mut cmd: Command, limit: Duration) -> Ran {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &cap) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = wait_at_most(cmd.spawn().unwrap(), limit);
    Ran {
        code: out
            .status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {:?}", out.status)),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

/// `cudnnlog scan --format json OOM` with `CUDNNLOG_CONFIG` set to `config`.
fn scan_with_config(config: &OsStr) -> Ran {
    let mut cmd = command(&["scan", "--format", "json", OOM]);
    cmd.env("CUDNNLOG_CONFIG", config);
    bounded(cmd, Duration::from_secs(20))
}

/// Exit 2, one line on standard error holding every one of `needles`, and
/// nothing on standard output (no scan was made with a config ignored).
fn refused(ran: &Ran, needles: &[&str]) {
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
    for needle in needles {
        assert!(ran.stderr.contains(needle), "{needle:?} in {}", ran.stderr);
    }
    assert!(!ran.stderr.contains('\u{fffd}'), "{}", ran.stderr);
    assert!(ran.stdout.is_empty(), "{}", ran.stdout);
}

/// A config file named by `CUDNNLOG_CONFIG` that cannot be used stops the
/// command with one line naming it and saying why: missing, a directory, a
/// device, a FIFO nobody writes (no hang), a symlink loop, a file over the
/// 1 MiB limit (a 200 MiB one, and `/proc/self/pagemap`, which never ends:
/// neither is read past the limit: the 200 MiB file cost 201 MiB, and
/// here aborts in a 64 MiB address space), text that is not UTF-8.
#[test]
fn a_named_config_that_cannot_be_used_is_an_error() {
    let s = Scratch::new("config-unusable");
    let fifo = s.fifo("config.fifo");
    std::os::unix::fs::symlink("loop-b.toml", s.0.join("loop-a.toml")).unwrap();
    std::os::unix::fs::symlink("loop-a.toml", s.0.join("loop-b.toml")).unwrap();
    let huge = s.0.join("huge.toml");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let latin1 = s.write("latin1.toml", b"# caf\xe9\nformat = \"json\"\n");
    let missing = s.0.join("missing.toml");
    let looped = s.0.join("loop-a.toml");
    let cases: [(&OsStr, &str); 8] = [
        (missing.as_os_str(), "No such file or directory"),
        (s.0.as_os_str(), "a directory"),
        (OsStr::new("/dev/zero"), "a device"),
        (fifo.as_os_str(), "a FIFO"),
        (looped.as_os_str(), "symbolic links"),
        (huge.as_os_str(), "over the 1 MiB limit"),
        (OsStr::new("/proc/self/pagemap"), "over the 1 MiB limit"),
        (latin1.as_os_str(), "not UTF-8"),
    ];
    for (config, why) in cases {
        let ran = scan_with_config(config);
        let path = config.to_str().unwrap();
        refused(&ran, &["CUDNNLOG_CONFIG", path, why]);
    }
}

/// With no `CUDNNLOG_CONFIG`, a config file that is not there is no config
/// (the default place is only looked at); `CUDNNLOG_CONFIG=""` means no
/// file at all.
#[test]
fn a_missing_default_config_is_no_config() {
    let s = Scratch::new("config-default-missing");
    let mut cmd = command(&["scan", "--format", "json", OOM]);
    cmd.env_remove("CUDNNLOG_CONFIG")
        .env("XDG_CONFIG_HOME", &s.0)
        .env("HOME", &s.0);
    let ran = bounded(cmd, Duration::from_secs(20));
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(ran.stderr.is_empty(), "{}", ran.stderr);
    let ran = scan_with_config(OsStr::new(""));
    assert_eq!(ran.code, 1, "{}", ran.stderr);
}

/// A bad value in the config file is one clean line naming the file, the
/// line and the key, with the values it takes (the TOML parser's newlines
/// came out as U+FFFD); a 64 KiB value or key is quoted as an excerpt.
#[test]
fn a_bad_value_in_the_config_is_one_clean_line() {
    let s = Scratch::new("config-bad-value");
    let file = s.write("config.toml", b"patterns = []\nformat = \"jsonn\"\n");
    let ran = scan_with_config(file.as_os_str());
    refused(
        &ran,
        &["config.toml line 2: format: unknown value \"jsonn\" (expected table, compact, json,"],
    );
    let long = "x".repeat(64 << 10);
    for text in [
        format!("color = \"{long}\"\n"),
        format!("{long} = 1\n"),
        format!("format = \"json\"\npatterns = \"{long}\n"),
    ] {
        let file = s.write("config.toml", text.as_bytes());
        let ran = scan_with_config(file.as_os_str());
        refused(&ran, &["config.toml line "]);
        assert!(ran.stderr.len() < 1024, "{} bytes", ran.stderr.len());
    }
}

/// `CUDNNLOG_FORMAT` and `CUDNNLOG_COLOR` that are not UTF-8, or not one of
/// their values, are errors naming the variable, quoting a short excerpt of
/// the value on one line.
#[test]
fn variables_that_cannot_be_used_are_errors() {
    let long = "y".repeat(64 << 10);
    for name in ["CUDNNLOG_FORMAT", "CUDNNLOG_COLOR"] {
        for value in [OsStr::from_bytes(b"js\xffon"), OsStr::new(&long)] {
            let mut cmd = command(&["scan", OOM]);
            cmd.env(name, value);
            let ran = bounded(cmd, Duration::from_secs(20));
            assert_eq!(ran.code, 2, "{name}: {}", ran.stderr);
            assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
            assert!(ran.stderr.contains(name), "{}", ran.stderr);
            assert!(ran.stderr.len() < 512, "{} bytes", ran.stderr.len());
        }
    }
    let mut cmd = command(&["scan", OOM]);
    cmd.env("CUDNNLOG_COLOR", "sometimes");
    let ran = bounded(cmd, Duration::from_secs(20));
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains(
            "CUDNNLOG_COLOR: unknown value \"sometimes\" (expected auto, always or never)"
        ),
        "{}",
        ran.stderr
    );
}

/// A pattern directory that cannot be read says so once (the reason was
/// printed twice), and one from the config file names the file.
#[test]
fn a_missing_patterns_directory_names_its_config_file_and_the_reason_once() {
    let s = Scratch::new("config-patterns");
    let file = s.write("config.toml", b"patterns = [\"/nonexistent/dir\"]\n");
    let ran = scan_with_config(file.as_os_str());
    refused(&ran, &["/nonexistent/dir", file.to_str().unwrap()]);
    assert_eq!(
        ran.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        ran.stderr
    );
    let ran = bounded(
        command(&["scan", "--patterns", "/nonexistent", OOM]),
        Duration::from_secs(20),
    );
    refused(&ran, &["/nonexistent"]);
    assert_eq!(
        ran.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        ran.stderr
    );
}
