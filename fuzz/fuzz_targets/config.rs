//! The config reader on arbitrary files: no panic; a file it cannot use is
//! one line on standard error, short whatever the file holds (a quoted
//! value or message is cut, never the whole 1 MiB); a file it uses gives
//! pattern directories under the file's own directory unless absolute.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicU64, Ordering};

static RUN: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("cudnnlog-fuzz-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("config-{}.toml", RUN.fetch_add(1, Ordering::Relaxed) % 8));
    std::fs::write(&path, data).unwrap();
    match cudnnlog_cli::fuzzing::config_file(&path) {
        Ok(patterns) => {
            for p in patterns {
                assert!(p.is_absolute() || p.starts_with(&dir), "{p:?}");
            }
        }
        Err(line) => {
            assert!(!line.contains('\n') && !line.contains('\r'), "{line:?}");
            assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
            assert!(line.chars().count() <= 1200, "{} chars: {line:?}", line.chars().count());
        }
    }
});
