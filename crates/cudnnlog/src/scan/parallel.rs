//! The mapped scan on all cores: chunks cut at line ends, the literal pass
//! per chunk, regions framed in batches, forks joined in order.
//!
//! It holds every candidate line of the file at once (regions are formed
//! over all of them): a log whose every line is a candidate (5,000,000
//! `Traceback` headers with nothing under them) held 40 MiB of them, and
//! as much again while they were joined. Past [`MAPPED_CANDIDATES`] the
//! literal pass stops, and the mapping is scanned window by window as a
//! stream is, whose windows hold a block's candidates at most: the same
//! report, in bounded memory.

use crate::context::LineCounter;
use crate::scan::end_source;
use crate::scan::line_end_after;
use crate::scan::regions;
use crate::scan::state::State;
use crate::scan::Found;
use crate::sink::Window;
use crate::source::Fill;
use crate::Fork;
use crate::Scanner;
use crate::SourceInfo;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The most candidate lines a mapped scan holds (12 MiB of them, at most
/// as much again while the chunks' lists are joined); past them, its
/// mapping is scanned window by window. An ordinary log has far fewer: a
/// burst of a million warnings (357 MB) has a million, and stays mapped,
/// where a stream's windows scan it at half the speed; a log of nothing
/// but candidates reaches the limit after 54 MiB.
pub(super) const MAPPED_CANDIDATES: usize = 3 << 19;

/// The least bytes of a chunk cut smaller so that every thread gets
/// [`CHUNKS_PER_THREAD`] of them.
const CHUNK_MIN: usize = 4 << 20;

/// Chunks per thread: with one chunk each (a 1 GiB log on 16 threads,
/// 64 MiB chunks), the scan waits for the slowest, and chunks differ in
/// how many candidates they hold.
const CHUNKS_PER_THREAD: usize = 4;

/// The least bytes of regions a framing batch is worth a thread for.
const BATCH_MIN: usize = 256 << 10;

/// The bytes between two line-count checkpoints of the mapped scan.
const CHECKPOINT: usize = 1 << 20;

/// The literal pass of a chunk is run a piece of about this many bytes at
/// a time (the pieces of two threads fit in the cache), each piece's
/// newlines counted after it.
const SEARCH_PIECE: usize = 1 << 20;

impl Scanner {
    /// Scans bytes in memory on all of rayon's threads, with the same result
    /// as [`scan_slice`](Scanner::scan_slice).
    ///
    /// The bytes are cut at line ends into chunks
    /// ([`ScannerBuilder::chunk_size`](crate::ScannerBuilder::chunk_size)); the lines before each chunk are
    /// counted first (a fast pass), then each chunk is scanned into a
    /// [`Fork`] of `sink`, with the whole input as context, so an event that
    /// straddles two chunks is framed whole and reported once, by the chunk
    /// where its first candidate line is. The forks are joined back in input
    /// order. `progress` is called with the bytes done after each chunk.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().chunk_size(64).build(Catalog::builtin().unwrap());
    /// let mut log = Vec::new();
    /// for i in 0..50 {
    ///     log.extend_from_slice(format!("INFO step {i} loss 0.5\n").as_bytes());
    /// }
    /// log.extend_from_slice(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let info = scanner.scan_slice_parallel(&log, &mut sink, &|_| {}).unwrap();
    /// let report = sink.into_report();
    /// assert_eq!((report.findings[0].first.line, report.findings[0].first.step), (51, Some(49)));
    /// ```
    pub fn scan_slice_parallel<S: Fork>(
        &self,
        bytes: &[u8],
        sink: &mut S,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceInfo, S::Error> {
        let info = self.slice_parallel(bytes, sink, progress)?;
        end_source(sink, info, None, None)
    }

    /// [`scan_slice_parallel`](Scanner::scan_slice_parallel), the sink not
    /// told the source ended.
    pub(super) fn slice_parallel<S: Fork>(
        &self,
        bytes: &[u8],
        sink: &mut S,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceInfo, S::Error> {
        use rayon::prelude::*;
        let chunk = (bytes.len() / (CHUNKS_PER_THREAD * rayon::current_num_threads()))
            .max(CHUNK_MIN)
            .min(self.config.chunk);
        let mut bounds = vec![0usize];
        while let Some(&last) = bounds.last() {
            if last >= bytes.len() {
                break;
            }
            let next = (last + chunk).min(bytes.len());
            bounds.push(if next == bytes.len() {
                next
            } else {
                line_end_after(bytes, next)
            });
        }
        let chunks: Vec<Range<usize>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
        let done = AtomicU64::new(0);
        let report = |n: usize| {
            let total = done.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            progress(total);
        };
        // Candidates found so far, over all chunks; past the limit every
        // chunk stops.
        let (candidates, too_many) = (AtomicUsize::new(0), AtomicBool::new(false));
        // 1. The literal pass per chunk, a piece at a time, each piece's
        // newlines counted right after its search, while its bytes are
        // still in the cache (one pass over memory, not two): a newline
        // count every `CHECKPOINT` bytes, so that a framing batch counts
        // lines from the checkpoint before it.
        let searched: Vec<(Found, Vec<(usize, u64)>)> = chunks
            .par_iter()
            .map(|range| {
                let mut found = Found::default();
                let mut piece_found = Found::default();
                let mut counts = Vec::new();
                // A quarter of a chunk at most: a small chunk (in tests)
                // is searched in several pieces too.
                let piece = SEARCH_PIECE.min(chunk / 4).max(1);
                let mut at = range.start;
                while at < range.end && !too_many.load(Ordering::Relaxed) {
                    let end = match at + piece {
                        e if e >= range.end => range.end,
                        e => line_end_after(bytes, e).min(range.end),
                    };
                    let counted =
                        self.find_candidates_counted(bytes, at..end, range.len(), &mut piece_found);
                    let n = piece_found.hits.len();
                    if candidates.fetch_add(n, Ordering::Relaxed) + n > self.config.candidates {
                        too_many.store(true, Ordering::Relaxed);
                        break;
                    }
                    found.extend(&piece_found);
                    match counted {
                        // The search counted them: the piece (about a
                        // checkpoint's bytes) is one checkpoint.
                        Some(n) => counts.push((at, n)),
                        None => {
                            for (i, block) in bytes[at..end].chunks(CHECKPOINT).enumerate() {
                                counts.push((
                                    at + i * CHECKPOINT,
                                    bytecount::count(block, b'\n') as u64,
                                ));
                            }
                        }
                    }
                    at = end;
                }
                if !too_many.load(Ordering::Relaxed) {
                    report(range.len());
                }
                (found, counts)
            })
            .collect();
        if too_many.load(Ordering::Relaxed) {
            drop(searched);
            return self.slice_windowed(bytes, sink, progress, &done);
        }
        // The regexes of the anchors found, compiled on all threads now:
        // compiled on first use, every thread would wait for each in turn.
        let mut fired = super::warm::Fired::default();
        for (found, _) in &searched {
            fired.union(&found.fired);
        }
        self.warm(&fired);
        // The line each chunk and checkpoint starts on.
        let mut first_line = Vec::with_capacity(chunks.len());
        let mut checkpoints: Vec<(usize, u64)> = Vec::new();
        let mut line = 1u64;
        for (_, counts) in &searched {
            first_line.push(line);
            for &(at, n) in counts {
                checkpoints.push((at, line));
                line += n;
            }
        }
        // Lines are counted from the checkpoint nearest each line asked
        // about, not through every byte before it in its chunk.
        let marks: std::sync::Arc<[(usize, u64)]> = checkpoints.into();
        // 2. The probe lines, per chunk.
        let empty: Vec<S> = chunks.iter().map(|_| sink.fork()).collect();
        type Searched<S, E> = Result<(S, Vec<usize>, Vec<usize>), E>;
        let found: Vec<Searched<S, S::Error>> = empty
            .into_par_iter()
            .zip(searched.into_par_iter())
            .map(|(mut fork, (found, _))| {
                let mut st = State::new();
                st.counter = LineCounter::marked(marks.clone());
                for &p in &found.probes {
                    self.probe_line(&mut st, bytes, p, &mut fork)?;
                }
                Ok((fork, found.hits, found.errors))
            })
            .collect();
        let total: usize = found
            .iter()
            .map(|f| f.as_ref().map_or(0, |(_, h, _)| h.len()))
            .sum();
        let mut hits: Vec<usize> = Vec::with_capacity(total);
        let mut forks: Vec<S> = Vec::with_capacity(chunks.len() * 2 + 1);
        let mut errors: Vec<Vec<usize>> = Vec::with_capacity(chunks.len());
        for f in found {
            let (fork, h, e) = f?;
            forks.push(fork);
            hits.extend(h);
            errors.push(e);
        }
        // Unclassified error lines are grouped online (templates.rs), in
        // an order-dependent way: they are grouped here in one pass, in
        // order, as a single pass groups them, and placed (their year) by
        // the whole input's window. Their fork is joined first.
        let mut unclassified = sink.fork();
        let mut st = State::new();
        for (c, lines) in errors.iter().enumerate() {
            st.counter = LineCounter::at(chunks[c].start, first_line[c]);
            for &p in lines {
                self.error_line(&mut st, bytes, p, &mut unclassified)?;
            }
        }
        let window = self.fork_window(&State::new(), bytes);
        unclassified.window_end(&window)?;
        forks.insert(0, unclassified);
        // 2. Regions over all candidates, as a single pass makes them; then
        // batches of regions framed in parallel. Regions are independent.
        let regions = self.regions(bytes, &hits, |_| true, None);
        let batches = batches(&regions, BATCH_MIN.min(chunk), chunk);
        let framed = self.frame_batches(
            sink,
            &regions,
            &batches,
            &hits,
            &(0..bytes.len()),
            &window,
            |_| {
                // Lines are counted from the checkpoint nearest each
                // region, not through the bytes between a batch's regions.
                let mut st = State::new();
                st.counter = LineCounter::marked(marks.clone());
                st
            },
        )?;
        forks.extend(framed.into_iter().map(|(fork, _)| fork));
        for fork in forks {
            sink.join(fork);
        }
        sink.window_end(&self.window(&State::new(), bytes))?;
        let lines = match bytes.last() {
            None => 0,
            Some(b'\n') => line - 1,
            Some(_) => line,
        };
        Ok(SourceInfo {
            path: "<memory>".to_string(),
            bytes: bytes.len() as u64,
            lines,
            modified: None,
            rank: None,
        })
    }
}

impl Scanner {
    /// [`slice_parallel`](Scanner::slice_parallel) of a mapping with too
    /// many candidates to hold at once: window by window, each copied from
    /// the mapping into a block as a positioned read fills it, framed on
    /// all threads while the next is searched
    /// ([`scan_positioned`](Scanner::scan_positioned)). `done`: the bytes
    /// reported done so far (the literal pass that gave up counted some),
    /// which the progress never goes back below.
    fn slice_windowed<S: Fork>(
        &self,
        bytes: &[u8],
        sink: &mut S,
        progress: &(dyn Fn(u64) + Sync),
        done: &AtomicU64,
    ) -> Result<SourceInfo, S::Error> {
        let read = AtomicU64::new(0);
        let from = Copied {
            bytes,
            at: 0,
            read: &read,
        };
        let windows = || {
            let now = read.load(Ordering::Relaxed);
            progress(done.fetch_max(now, Ordering::Relaxed).max(now));
        };
        let (info, _) = self.scan_positioned("<memory>", from, sink, &windows)?;
        Ok(info)
    }
}

/// Bytes in memory (a mapping) read into a stream's blocks.
struct Copied<'a> {
    bytes: &'a [u8],
    at: usize,
    /// How far the reads went, for progress.
    read: &'a AtomicU64,
}

impl Fill for Copied<'_> {
    fn fill(&mut self, buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
        let n = buf.len().min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        self.read.store(self.at as u64, Ordering::Relaxed);
        (n, None)
    }
}

/// Consecutive regions framed on one thread: their indices, and their
/// bytes (the larger batches are begun first).
struct Batch {
    regions: Range<usize>,
    bytes: usize,
}

/// Consecutive regions in batches small enough that every thread gets
/// several (regions are few and uneven: a burst of warnings is one long
/// region), of `least` to `most` bytes of regions.
fn batches(regions: &[regions::Region], least: usize, most: usize) -> Vec<Batch> {
    let framed_bytes: usize = regions.iter().map(|r| r.len()).sum();
    let per_batch = (framed_bytes / (4 * rayon::current_num_threads())).clamp(least, most);
    let mut batches: Vec<Batch> = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        match batches.last_mut() {
            Some(b) if b.bytes < per_batch => {
                b.regions.end = i + 1;
                b.bytes += r.len();
            }
            _ => batches.push(Batch {
                regions: i..i + 1,
                bytes: r.len(),
            }),
        }
    }
    batches
}

impl Scanner {
    /// [`finish_window`](Scanner::finish_window) for a sink that forks: a
    /// stream's window has its regions framed in batches on all threads,
    /// each into a fork told the window's end and joined back in order, as
    /// the mapped scan frames them; the probe and error lines, which are
    /// few and grouped in order, go to `sink` first, as they do one window
    /// at a time. Regions are framed independently, so the sink ends up
    /// with what [`finish_window`](Scanner::finish_window) gives it.
    pub(super) fn finish_window_forked<S: Fork>(
        &self,
        st: &mut State,
        hay: &[u8],
        owned: Range<usize>,
        found: &Found,
        regions: Option<Vec<regions::Region>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        self.warm(&found.fired);
        self.window_lines(st, hay, &owned, found, sink)?;
        let regions = regions.unwrap_or_else(|| self.window_regions(st, hay, &owned, false, found));
        // A window holds a few batches' worth at least (a small block,
        // in tests, has small batches).
        let block = self.config.block;
        let batches = batches(&regions, BATCH_MIN.min(block / 8).max(1), block);
        let window = self.fork_window(st, hay);
        if batches.len() < 2 {
            self.frame_regions(st, hay, &regions, &found.hits, &owned, sink)?;
            return sink.window_end(&self.window(st, hay));
        }
        let state = |_: &[regions::Region]| {
            let mut bst = State::new();
            bst.base = st.base;
            bst.counter = st.counter.clone();
            bst.split_at = st.split_at;
            bst
        };
        let framed = self.frame_batches(
            sink,
            &regions,
            &batches,
            &found.hits,
            &owned,
            &window,
            state,
        )?;
        for (fork, stopped) in framed {
            sink.join(fork);
            st.stopped |= stopped;
        }
        sink.window_end(&self.window(st, hay))
    }

    /// Frames each batch of `regions` on rayon's threads into a fork of
    /// `sink`, from the state `state` makes for it, and tells the fork the
    /// window's end; the forks in order, each with whether its sink asked
    /// to stop.
    #[allow(clippy::too_many_arguments)]
    fn frame_batches<S: Fork>(
        &self,
        sink: &S,
        regions: &[regions::Region],
        batches: &[Batch],
        hits: &[usize],
        owned: &Range<usize>,
        window: &Window<'_>,
        state: impl Fn(&[regions::Region]) -> State + Sync,
    ) -> Result<Vec<(S, bool)>, S::Error> {
        // The largest batches first: a burst's region, framed on one
        // thread, is the longest task, and taken in log order, one found
        // late kept the other threads waiting for it (at two threads too).
        // Each batch's fork goes back to its place, so the forks are still
        // joined in order. After an error no batch is begun.
        let mut order: Vec<usize> = (0..batches.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(batches[i].bytes));
        let jobs: Vec<(usize, S)> = order.into_iter().map(|i| (i, sink.fork())).collect();
        type Slot<S, E> = std::sync::Mutex<Option<Result<(S, bool), E>>>;
        let slots: Vec<Slot<S, S::Error>> = batches.iter().map(|_| Default::default()).collect();
        let failed = AtomicBool::new(false);
        rayon::scope_fifo(|scope| {
            for (i, mut fork) in jobs {
                let (slot, state, failed) = (&slots[i], &state, &failed);
                scope.spawn_fifo(move |_| {
                    if failed.load(Ordering::Relaxed) {
                        return;
                    }
                    let batch = &regions[batches[i].regions.clone()];
                    let mut st = state(batch);
                    let framed = self
                        .frame_regions(&mut st, window.hay, batch, hits, owned, &mut fork)
                        .and_then(|()| fork.window_end(window))
                        .map(|()| (fork, st.stopped));
                    failed.fetch_or(framed.is_err(), Ordering::Relaxed);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(framed);
                });
            }
        });
        // A slot is empty only when a batch failed: its error is returned.
        let mut framed = Vec::with_capacity(slots.len());
        for slot in slots {
            match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(Ok(f)) => framed.push(f),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        Ok(framed)
    }
}

#[cfg(test)]
mod tests {
    use crate::report::FindingsSink;
    use crate::{Catalog, ScannerBuilder};

    /// The real logs of the repository one after another, then a flood of
    /// tracebacks with no frame and more of the logs.
    fn log() -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/real");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        names.sort();
        let mut log = Vec::new();
        for (i, name) in names.iter().enumerate() {
            log.extend(std::fs::read(name).unwrap());
            if i == names.len() / 2 {
                log.extend(b"Traceback (most recent call last):\n".repeat(60_000));
            }
        }
        log
    }

    /// A mapped scan with more candidates than it may hold is scanned
    /// window by window, and reports what holding them all reports.
    #[test]
    fn too_many_candidates_give_the_same_report_window_by_window() {
        let log = log();
        let report = |candidates: usize| {
            let mut builder = ScannerBuilder::new();
            builder.chunk_size(1 << 20).block_size(1 << 20);
            builder.config.candidates = candidates;
            let scanner = builder.build(Catalog::builtin().unwrap());
            let mut sink = FindingsSink::new(scanner.catalog());
            let info = scanner
                .scan_slice_parallel(&log, &mut sink, &|_| {})
                .unwrap();
            let report = sink.into_report();
            assert!(report.findings.len() > 3, "{}", report.findings.len());
            (info.lines, serde_json::to_string(&report).unwrap())
        };
        let (lines, all) = report(usize::MAX);
        for candidates in [100, 50_000] {
            let (l, windowed) = report(candidates);
            assert_eq!(l, lines);
            assert!(windowed == all, "{candidates} candidates");
        }
    }
}
