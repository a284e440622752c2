//! A regular file read by positioned reads (one written seconds ago, or any
//! file with mapping off), on all cores: each window is framed while the
//! next one is read and searched, the two sides joined on rayon's threads.
//! A mapped file of too many candidates is scanned so too, window by
//! window from its mapping (`scan/parallel.rs`).

use super::window::Block;
use crate::scan::state::State;
use crate::scan::window;
use crate::source::Fill;
use crate::Fork;
use crate::Scanner;
use crate::SourceInfo;

impl Scanner {
    /// Scans a regular file window by window, in two blocks of memory: while
    /// one window is framed into forks of `sink` ([`finish_window_forked`](Scanner::finish_window_forked)),
    /// the next is read by positioned reads ([`Positioned`](crate::source::Positioned)),
    /// or copied from a mapping, searched and
    /// planned, both sides one [`rayon::join`]: each side's work is split
    /// in pieces, and a thread done with its side's takes the other's, so
    /// that neither waits on the other with a core idle (a file cannot
    /// block a read for long, as a pipe can). The windows are framed in
    /// order, so the sink sees what [`scan_stream`](Scanner::scan_stream)
    /// gives it. `progress` is called after each window; the sink is not
    /// told the source ended.
    pub(super) fn scan_positioned<S: Fork, F: Fill>(
        &self,
        name: &str,
        mut file: F,
        sink: &mut S,
        progress: &dyn Fn(),
    ) -> Result<(SourceInfo, Option<std::io::Error>), S::Error> {
        let cfg = self.config;
        let mut now = Block::first();
        now.read(&mut file, &cfg);
        now.prepare(self, false, None);
        let mut next = Block::first();
        let (mut base, mut split_at) = (0u64, None);
        let mut st = State::new();
        let finish: window::Finish<S> = Scanner::finish_window_forked;
        loop {
            now.base = base;
            if now.eof {
                now.split_at = split_at;
                now.frame(self, &mut st, sink, finish)?;
                progress();
                return Ok(now.end(&mut st, name));
            }
            now.hand_on(&cfg, &mut split_at);
            next.keep_from(&now);
            let next_base = base + now.keep as u64;
            let split = Block::split_in(split_at, next_base);
            // Once the sink has all it wants, later windows are read but
            // not searched.
            let stopped = st.stopped;
            let (framed, ()) = rayon::join(
                || now.frame(self, &mut st, sink, finish),
                || {
                    next.read(&mut file, &cfg);
                    next.prepare(self, stopped, split);
                },
            );
            framed?;
            progress();
            now.pass_on(&mut st);
            std::mem::swap(&mut now, &mut next);
            base = next_base;
        }
    }
}
