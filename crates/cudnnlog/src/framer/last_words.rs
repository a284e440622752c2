//! Whether an exception was its writer's last words: nothing after it says
//! the program went on. A fatal exception makes its finding an error even
//! when its pattern's usual severity is a warning.

use super::{lines, Event};
use crate::prefix::parse_prefix;

/// How many lines after an exception are read to tell whether its writer
/// went on.
const LAST_WORDS_LINES: usize = 20;

/// Whether `ev`, a traceback or an exception, was the last thing its
/// writer did: none of the lines after its exception line (the message's
/// continuation and what follows, up to `LAST_WORDS_LINES` (20) of the same
/// writer) says the program went on — a progress marker (`step 12`, `epoch
/// 3`), or the words a survivor logs (`Falling back to cpu`, `retrying`,
/// `skipping`, `ignoring`).
pub fn last_words(hay: &[u8], ev: &Event<'_>) -> bool {
    fn went_on() -> &'static [memchr::memmem::Finder<'static>] {
        static FINDERS: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>> =
            std::sync::OnceLock::new();
        FINDERS.get_or_init(|| {
            WENT_ON
                .iter()
                .map(|w| memchr::memmem::Finder::new(*w))
                .collect()
        })
    }
    const WENT_ON: &[&[u8]] = &[
        b"Falling back",
        b"falling back",
        b"Retrying",
        b"retrying",
        b"Skipping",
        b"skipping",
        b"Ignoring",
        b"ignoring",
        b"Continuing",
        b"continuing",
    ];
    let Some(exc) = ev.exception.and_then(|i| ev.lines.get(i)) else {
        return true;
    };
    let from = memchr::memchr(b'\n', &hay[exc.end.min(hay.len())..])
        .map_or(hay.len(), |p| exc.end + p + 1);
    let mut seen = 0;
    for (s, e) in lines(hay, from..hay.len()) {
        let raw = &hay[s..e];
        let p = parse_prefix(raw);
        if p.origin != ev.origin {
            continue;
        }
        let body = &raw[p.body.min(raw.len())..];
        let progress = crate::context::progress_of(body);
        if progress.step.is_some()
            || progress.epoch.is_some()
            || went_on().iter().any(|w| w.find(body).is_some())
        {
            return false;
        }
        seen += 1;
        if seen >= LAST_WORDS_LINES {
            break;
        }
    }
    true
}
