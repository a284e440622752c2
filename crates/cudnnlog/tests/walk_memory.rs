//! What a directory walk holds per file, and what a small file's scan
//! holds, counted by the allocator. A tree of 50,000 fresh files took 30 s
//! and 163 MiB: each file was read into two zeroed 8 MiB blocks. For
//! 10,000 files of 129-byte paths the walk held 293 bytes a file at its
//! peak and the grouping into jobs 704; now 220 and 435 (the path, its
//! place in the list, the file's and its directory's device and inode;
//! then each job's copy of its path and its name, and its key while the
//! files are grouped).

#![cfg(unix)]

use cudnnlog::fleet::group;
use cudnnlog::report::FindingsSink;
use cudnnlog::source::Walk;
use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to `System` unchanged; only counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's promises, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's promises, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Held by each test: the counts are the whole process's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The peak of bytes in use above those in use now while `f` runs.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - base)
}

/// A tree of `n` logs, a hundred per directory, four levels deep, paths
/// of about 110 bytes as a cluster's job directories have.
fn tree(root: &Path, n: usize) {
    for i in 0..n {
        let dir = root.join(format!(
            "cluster-{:02}-aaaaaaaaaaaaaaaa/experiment-{:02}-bbbbbbbbbbbbbbbbbb/run-{:02}-cccccccccccccccc",
            i / 10_000,
            i / 1000 % 10,
            i / 100 % 10,
        ));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("job-{i:05}.log")),
            "INFO step 1 loss 0.5\n",
        )
        .unwrap();
    }
}

/// Removes a tree (`rm -rf`: many times faster than `remove_dir_all`
/// here on a tree of many directories).
fn remove(root: &Path) {
    let _ = std::process::Command::new("rm")
        .arg("-rf")
        .arg(root)
        .status();
}

#[test]
fn a_walk_holds_little_beyond_each_path() {
    const FILES: usize = 10_000;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let root = std::env::temp_dir().join(format!("cudnnlog-walk-memory-{}", std::process::id()));
    remove(&root);
    tree(&root, FILES);
    let (walked, walk_peak) =
        peak_during(|| Walk::default().files(std::slice::from_ref(&root)).unwrap());
    let (jobs, group_peak) = peak_during(|| group(&walked.files));
    remove(&root);
    assert_eq!((walked.files.len(), jobs.len()), (FILES, FILES));
    let path_bytes: usize = walked.files.iter().map(|p| p.as_os_str().len()).sum();
    let per_file = |peak: usize| (peak.saturating_sub(path_bytes)) / FILES;
    // The walk: the path, its place in the list, the file's and its
    // directory's device and inode.
    assert!(
        per_file(walk_peak) <= 140,
        "walk: {} B per file beyond its path",
        per_file(walk_peak)
    );
    // The grouping: each job's copy of its path and its name, its key
    // while the files are grouped.
    assert!(
        group_peak <= 3 * path_bytes + 150 * FILES,
        "grouping: {} B per file ({} B of path each)",
        group_peak / FILES,
        path_bytes / FILES
    );
}

/// A small file read by positioned reads (a fresh log, or `--no-mmap`) was
/// read into two blocks of 8 MiB, zeroed: 17 MiB and a millisecond of
/// zeroing a file, 30 s for a tree of 50,000 fresh files. A window's room
/// now grows with what is read.
#[test]
fn a_small_file_costs_its_size_not_a_block() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::temp_dir().join(format!("cudnnlog-small-{}.log", std::process::id()));
    let log = "INFO step 1 loss 0.5\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
    std::fs::write(&path, log).unwrap();
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    // Once, so that what is made once per process is made.
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_path_parallel(&path, MmapChoice::never(), &mut sink, &|_| {})
        .unwrap();
    let (report, peak) = peak_during(|| {
        let mut sink = FindingsSink::new(scanner.catalog());
        scanner
            .scan_path_parallel(&path, MmapChoice::never(), &mut sink, &|_| {})
            .unwrap();
        sink.into_report()
    });
    std::fs::remove_file(&path).unwrap();
    assert_eq!(report.findings[0].class, "cuda.oom");
    assert!(
        peak < 2 << 20,
        "{} KiB for a {}-byte file",
        peak >> 10,
        log.len()
    );
}
