//! `--follow`'s core, the library's `Follower`, driven by arbitrary bytes
//! and an arbitrary schedule: pieces of the input pushed, scans with and
//! without flushing, and restarts (a truncated or replaced file). No
//! panic; nothing announced twice between restarts; every announced place
//! inside what was pushed; memory within the follower's limits.
#![no_main]

use cudnnlog::follow::{Follower, CONTEXT, MAX_PENDING};
use cudnnlog::{Catalog, Scanner, ScannerBuilder};
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;
use std::sync::OnceLock;

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| ScannerBuilder::new().build(Catalog::builtin().expect("built-in catalog")))
}

fuzz_target!(|data: &[u8]| {
    // The first bytes are the schedule, one byte a step; the rest is the log.
    let Some((&steps, rest)) = data.split_first() else {
        return;
    };
    let steps = (steps as usize % 16).min(rest.len());
    let (schedule, log) = rest.split_at(steps);
    let mut f = Follower::new(scanner());
    let mut seen: HashSet<(String, u64)> = HashSet::new();
    let mut at = 0usize;
    let mut pushed_lines = 1u64;
    let mut step = |f: &mut Follower<'_>, op: u8, at: &mut usize, seen: &mut HashSet<_>| {
        match op % 8 {
            // Push a piece of 1 to 4096 bytes (as a poll of the file would).
            0..=4 => {
                let n = (1 + (op as usize) * 131) % 4096 + 1;
                let piece = &log[*at..(*at + n).min(log.len())];
                f.push(piece);
                pushed_lines += piece.iter().filter(|&&b| b == b'\n').count() as u64;
                *at += piece.len();
            }
            5 | 6 => {
                for a in f.scan(op % 8 == 6).expect("a scan of bytes cannot fail") {
                    assert!(a.place.byte <= f.offset(), "{a:?}");
                    assert!(a.place.line <= pushed_lines, "{a:?}");
                    let key = (a.finding.class.clone(), a.place.byte);
                    assert!(seen.insert(key), "announced twice: {a:?}");
                }
            }
            _ => {
                f.reset();
                seen.clear();
                pushed_lines = 1;
                *at = 0;
            }
        }
        assert!(f.pending() <= MAX_PENDING + 4096);
        let _ = CONTEXT;
    };
    for &op in schedule.iter().cycle().take(64) {
        step(&mut f, op, &mut at, &mut seen);
        if at >= log.len() {
            break;
        }
    }
    // The rest of the log, then a last flush: as a writer that stopped.
    if at < log.len() {
        f.push(&log[at..]);
    }
    for flush in [false, true] {
        for a in f.scan(flush).expect("a scan of bytes cannot fail") {
            assert!(a.place.byte <= f.offset(), "{a:?}");
        }
    }
});
