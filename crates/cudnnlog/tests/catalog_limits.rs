//! User catalogs are untrusted input: directories too big, files that are
//! not regular files (a FIFO, a socket, `/dev/zero`), files that lie about
//! their size and regexes that expand to gigabytes are refused, promptly,
//! with an error naming the file or directory and the limit.
#![cfg(unix)]

use cudnnlog::{CatalogBuilder, Error};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A scratch directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("cudnnlog-limits-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn write(&self, file: &str, text: &str) -> PathBuf {
        let path = self.0.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A valid user pattern `id`, with these anchors and extra keys.
fn pattern(id: &str, anchors: &[String], extra: &str) -> String {
    let anchors: Vec<String> = anchors.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "id = \"{id}\"\nclass = \"python.exception\"\nseverity = \"error\"\nstability = \"preview\"\n\
         since = \"0.1.0\"\nsummary = \"s\"\nanchors = [{}]\nregex = 'ZZTOP marker'\n{extra}\n\
         [doc]\nwhat = \"w\"\nwhy = \"y\"\n[[examples]]\nlog = \"ZZTOP marker\"\n",
        anchors.join(", ")
    )
}

/// Builds the catalog of the built-in files and `dirs` on another thread:
/// the test fails, rather than hangs, when that takes more than 10 s.
fn load(dirs: &[&Path]) -> Result<cudnnlog::Catalog, Error> {
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let mut b = CatalogBuilder::new();
        for d in &dirs {
            b.add_dir(d);
        }
        let _ = tx.send(b.build());
    });
    let r = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("the load did not return within 10 s"));
    assert!(start.elapsed() < Duration::from_secs(10));
    r
}

/// The catalog error of a load that must fail: (file, message).
fn refused(r: Result<cudnnlog::Catalog, Error>) -> (String, String) {
    match r {
        Err(e @ Error::Catalog { .. }) => {
            let text = e.to_string();
            let Error::Catalog { file, .. } = e else {
                unreachable!()
            };
            (file, text)
        }
        Err(e) => panic!("expected a catalog error, got {e}"),
        Ok(c) => panic!(
            "expected a catalog error, got a catalog of {} patterns",
            c.patterns().len()
        ),
    }
}

fn anchors(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("anchor {i:06}")).collect()
}

#[test]
fn a_pattern_of_50_000_anchors_is_refused_and_20_000_load() {
    let dir = TempDir::new("anchors");
    let file = dir.write(
        "many-anchors.toml",
        &pattern("many-anchors", &anchors(50_000), ""),
    );
    assert!(std::fs::metadata(&file).unwrap().len() < 1 << 20);
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, file.display().to_string());
    assert!(
        msg.contains("50000 anchors") && msg.contains("at most 20000"),
        "{msg}"
    );

    // At the limit, across two files and two directories, it loads.
    let other = TempDir::new("anchors-2");
    dir.write(
        "many-anchors.toml",
        &pattern("many-anchors", &anchors(10_000), ""),
    );
    other.write(
        "more-anchors.toml",
        &pattern("more-anchors", &anchors(10_000), ""),
    );
    let c = load(&[dir.path(), other.path()]).unwrap();
    assert!(c.pattern("many-anchors").is_some() && c.pattern("more-anchors").is_some());
    // One more is too many.
    other.write("one-more.toml", &pattern("one-more", &anchors(1), ""));
    let (f, msg) = refused(load(&[dir.path(), other.path()]));
    assert!(
        f.ends_with("one-more.toml") && msg.contains("at most 20000 in all"),
        "{f}: {msg}"
    );
}

#[test]
fn more_than_2000_files_are_refused_across_directories() {
    let a = TempDir::new("files-a");
    let b = TempDir::new("files-b");
    for i in 0..1000 {
        a.write(
            &format!("sub/p{i}.toml"),
            &pattern(&format!("p{i}"), &anchors(1), ""),
        );
    }
    // 2,000 files load.
    for i in 1000..2000 {
        b.write(
            &format!("p{i}.toml"),
            &pattern(&format!("p{i}"), &anchors(1), ""),
        );
    }
    let c = load(&[a.path(), b.path()]).unwrap();
    assert!(c.pattern("p0").is_some() && c.pattern("p1999").is_some());
    b.write("p2000.toml", &pattern("p2000", &anchors(1), ""));
    let (f, msg) = refused(load(&[a.path(), b.path()]));
    assert_eq!(f, b.path().display().to_string());
    assert!(
        msg.contains("more than 2000 catalog files") && msg.contains("at most 2000"),
        "{msg}"
    );
}

#[test]
fn more_than_16_mib_of_files_is_refused() {
    let dir = TempDir::new("bytes");
    // 17 files just under 1 MiB each: each passes the per-file limit.
    let comment = format!("# {}\n", "x".repeat(1_000_000));
    for i in 0..17 {
        dir.write(&format!("f{i:02}.toml"), &comment);
    }
    let (f, msg) = refused(load(&[dir.path()]));
    assert!(f.ends_with("f16.toml"), "{f}");
    assert!(
        msg.contains("17000051 bytes") && msg.contains("at most 16777216 in all"),
        "{msg}"
    );
}

#[test]
fn more_than_5000_probes_or_10000_regexes_are_refused() {
    let dir = TempDir::new("entries");
    let mut probes = String::new();
    for i in 0..5001 {
        probes.push_str(&format!(
            "[[probe]]\nid = \"p{i}\"\nwhat = \"w\"\nanchors = [\"ZZTOP {i}\"]\nregex = 'x'\n\
             [[probe.examples]]\nlog = \"x\"\nexpect = {{}}\n"
        ));
    }
    let file = dir.write("environment.toml", &probes);
    assert!(std::fs::metadata(&file).unwrap().len() < 1 << 20);
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, file.display().to_string());
    assert!(
        msg.contains("5001 patterns") && msg.contains("at most 5000"),
        "{msg}"
    );

    std::fs::remove_file(&file).unwrap();
    let facts: Vec<String> = (0..10_000).map(|i| format!("'(?P<f{i}>x)'")).collect();
    let file = dir.write(
        "many-facts.toml",
        &pattern(
            "many-facts",
            &anchors(1),
            &format!("facts = [{}]", facts.join(", ")),
        ),
    );
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, file.display().to_string());
    assert!(
        msg.contains("10001 regexes") && msg.contains("at most 10000"),
        "{msg}"
    );
}

/// A fragment of 500 KB that compiles to nearly nothing (a comment), named
/// 40 times by a regex of 280 bytes: 20 MB once expanded.
#[test]
fn a_regex_that_expands_to_megabytes_is_refused_before_expanding() {
    let dir = TempDir::new("fragments");
    dir.write(
        "fragments.toml",
        &format!(
            "[fragments]\nhuge = \"(?x: ZZTOP #{}\\n)\"\n",
            "x".repeat(500_000)
        ),
    );
    let file = dir.write(
        "bomb.toml",
        &pattern("bomb", &anchors(1), "").replace(
            "regex = 'ZZTOP marker'",
            &format!("regex = '{}'", "{{huge}}".repeat(40)),
        ),
    );
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, file.display().to_string());
    assert!(
        msg.contains("bytes of regexes") && msg.contains("at most 16777216"),
        "{msg}"
    );
}

#[test]
fn a_fifo_named_toml_is_refused_without_opening_it() {
    let dir = TempDir::new("fifo");
    dir.write("ok.toml", &pattern("ok", &anchors(1), ""));
    let fifo = dir.path().join("x.toml");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, fifo.display().to_string());
    assert!(msg.contains("a fifo, not a regular file"), "{msg}");
}

#[test]
fn a_socket_named_toml_is_refused() {
    let dir = TempDir::new("socket");
    let path = dir.path().join("x.toml");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, path.display().to_string());
    assert!(msg.contains("a socket, not a regular file"), "{msg}");
}

#[test]
fn a_symlink_to_dev_zero_is_refused() {
    let dir = TempDir::new("zero");
    let link = dir.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, link.display().to_string());
    assert!(msg.contains("a device, not a regular file"), "{msg}");
}

/// `/proc/kallsyms` is a regular file whose size says 0 and which holds
/// megabytes: at most the limit and one byte are read of it.
#[test]
fn a_file_that_lies_about_its_size_is_read_no_further_than_the_limit() {
    let target = Path::new("/proc/kallsyms");
    let mut head = Vec::new();
    let _ = std::fs::File::open(target)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 2 << 20), &mut head));
    let holds = head.len();
    if holds <= 1 << 20 || std::fs::metadata(target).unwrap().len() != 0 {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"skipped: /proc/kallsyms is not a lying file of over 1 MiB here\n",
        );
        return;
    }
    let dir = TempDir::new("lying");
    let link = dir.path().join("lying.toml");
    std::os::unix::fs::symlink(target, &link).unwrap();
    let (f, msg) = refused(load(&[dir.path()]));
    assert_eq!(f, link.display().to_string());
    assert!(
        msg.contains("more than 1048576 bytes read (its size says 0)")
            && msg.contains("at most 1048576 bytes"),
        "{msg}"
    );
}

/// Two symlinks to the directory itself would make the walk exponential:
/// each directory is walked once. A directory named `*.toml` is walked
/// like any other.
#[test]
fn symlink_loops_are_walked_once() {
    let dir = TempDir::new("loops");
    dir.write("ok.toml", &pattern("ok", &anchors(1), ""));
    dir.write("more.toml/deeper.toml", &pattern("deeper", &anchors(1), ""));
    std::os::unix::fs::symlink(".", dir.path().join("a")).unwrap();
    std::os::unix::fs::symlink("..", dir.path().join("more.toml/b")).unwrap();
    let c = load(&[dir.path()]).unwrap();
    let mine: Vec<&str> = c
        .patterns()
        .iter()
        .filter(|p| p.file.starts_with(&dir.path().display().to_string()))
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(mine, ["deeper", "ok"]);
}
