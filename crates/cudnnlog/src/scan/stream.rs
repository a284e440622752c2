//! The streamed scan: a pipe, a compressed log, a file still being
//! written. Windows of `block_size` bytes keep the context before them;
//! while one window is framed, the next one's literal pass runs on the
//! other cores.

use super::*;

impl Scanner {
    /// Scans a stream block by block, with memory bounded by the block size
    /// and the context sizes whatever the stream's length. The reader is
    /// read on a helper thread while the block before is framed.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().block_size(4096).build(Catalog::builtin().unwrap());
    /// let mut log = Vec::new();
    /// for i in 0..500 {
    ///     log.extend_from_slice(format!("INFO step {i} loss 0.5\n").as_bytes());
    /// }
    /// log.extend_from_slice(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let info = scanner.scan_reader("<stdin>", &log[..], &mut sink).unwrap();
    /// let report = sink.into_report();
    /// assert_eq!((report.findings[0].class.as_str(), report.findings[0].first.line), ("cuda.oom", 501));
    /// ```
    pub fn scan_reader<S: Sink, R: Read + Send>(
        &self,
        name: &str,
        reader: R,
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        let one: Finish<S> = |scanner, st, hay, owned, found, regions, sink| {
            scanner.finish_window(st, hay, owned, false, found, regions, sink)
        };
        let (info, cut) = self.scan_stream(name, reader, sink, &|| {}, one)?;
        end_source(sink, info, cut, None)
    }

    /// Scans standard input as source `source` (named `<stdin>`), gzip or
    /// zstd decompressed when its first bytes say so: what `cudnnlog scan -`
    /// and `kubectl logs job/x | cudnnlog scan` read.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when standard input cannot be read (or a compressed
    /// stream is corrupt: [`Incomplete::of`](crate::source::Incomplete::of)
    /// then gives what was read before), or what the sink returns.
    ///
    /// ```no_run
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let source = scanner.scan_stdin(&mut sink)?;
    /// let report = sink.into_report();
    /// println!("{}", report.primary.unwrap_or_default());
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn scan_stdin<S: Sink>(&self, sink: &mut S) -> Result<SourceInfo, S::Error> {
        const NAME: &str = "<stdin>";
        let (_, reader) = crate::source::decompressed(std::io::stdin()).map_err(|e| {
            S::Error::from(Error::Io {
                path: NAME.to_string(),
                source: e,
            })
        })?;
        self.scan_reader(NAME, reader, sink)
    }

    /// [`scan_reader`](Scanner::scan_reader), calling `progress` after each
    /// window, the sink not told the source ended: what was read, and the
    /// error of a read that failed part way (after the bytes before it).
    ///
    /// A helper thread reads the stream window by window, runs each
    /// window's literal pass (on rayon's threads) and plans it
    /// ([`Block::plan`]); this thread frames the windows in order (the sink
    /// need not be `Send`), so the sink sees the same calls in the same
    /// order as when the windows are done one after the other. While this
    /// thread frames a window, the helper reads and searches the next one
    /// ([`AHEAD`]); each side's work is split on rayon's threads, so a
    /// thread done with its side takes pieces of the other's.
    ///
    /// `finish` frames a window: [`finish_window`](Scanner::finish_window) on
    /// this thread, or [`finish_window_forked`](Scanner::finish_window_forked) on
    /// all of them for a sink that forks.
    pub(super) fn scan_stream<S: Sink, R: Read + Send>(
        &self,
        name: &str,
        reader: R,
        sink: &mut S,
        progress: &dyn Fn(),
        finish: Finish<S>,
    ) -> Result<(SourceInfo, Option<std::io::Error>), S::Error> {
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (full, windows) = std::sync::mpsc::sync_channel::<Block>(AHEAD);
        let (free, buffers) = std::sync::mpsc::channel::<Block>();
        std::thread::scope(|scope| {
            // Dropped when this closure returns (an error framing a
            // window), which ends the helper before the scope waits for it.
            let (windows, free) = (windows, free);
            let stop = &stop;
            let helper = scope.spawn(move || self.read_windows(reader, buffers, full, stop));
            let mut st = State::new();
            for mut now in windows.iter() {
                st.base = now.base;
                st.split_at = now.split_at;
                if !st.stopped {
                    let owned = now.owned.clone();
                    let regions = now.regions.take();
                    finish(self, &mut st, &now.buf, owned, &now.found, regions, sink)?;
                    // Once the sink has all it wants, later windows are
                    // read but not searched.
                    stop.store(st.stopped, std::sync::atomic::Ordering::Relaxed);
                }
                progress();
                if now.eof {
                    let lines = count_lines(&mut st.counter, &now.buf);
                    let info = SourceInfo {
                        path: name.to_string(),
                        bytes: st.base + now.buf.len() as u64,
                        lines,
                        modified: None,
                    };
                    // A read that failed part way (a truncated archive)
                    // ends the stream: what came before it was scanned.
                    return Ok((info, now.error.take()));
                }
                let line = st.counter.line_at(&now.buf, now.keep);
                st.counter = LineCounter::new(line);
                // The helper may have stopped (its side of the channel
                // closed only when it is done).
                let _ = free.send(now);
            }
            // The helper ended without the last window: it panicked.
            match helper.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the helper sends the last window before it returns"),
            }
        })
    }

    /// The helper of [`scan_stream`](Scanner::scan_stream): reads windows
    /// into the blocks it is given back (a fresh one while fewer than
    /// `AHEAD + 1` exist), runs their literal pass unless `stop` is set,
    /// plans them, and sends them on in order. Returns after the last
    /// window, or when the windows are no longer taken (an error framing
    /// one).
    fn read_windows<R: Read>(
        &self,
        mut reader: R,
        buffers: std::sync::mpsc::Receiver<Block>,
        full: std::sync::mpsc::SyncSender<Block>,
        stop: &std::sync::atomic::AtomicBool,
    ) {
        let cfg = self.config;
        // An event may start `back` bytes before the first owned candidate,
        // and its context is looked up `lookback` bytes before that.
        let keep_back = cfg.back + cfg.back.max(cfg.lookback);
        let capacity = keep_back + cfg.block + cfg.forward;
        let mut made = 1;
        let mut now = Block::first(capacity);
        now.read(&mut reader, &cfg);
        self.search_window(&now.buf, &now.owned, &mut now.found);
        now.plan(self, None);
        let (mut base, mut split_at) = (0u64, None);
        loop {
            now.base = base;
            if now.eof {
                now.split_at = split_at;
                let _ = full.send(now);
                return;
            }
            // What later windows need of this one: the context before, and
            // the unowned rest. A region that may go on past this window is
            // the next one's (it holds the whole region, as a mapped scan
            // frames it): the plan says where it starts. The context starts
            // on a line, unless that line began more than `keep_back` before
            // it: a line with no end (a decompression bomb of zeros) is cut,
            // not kept whole, so memory stays bounded.
            if let Some((first, split)) = now.carry {
                now.owned.end = first;
                split_at = split.then_some(base + first as u64);
            }
            now.split_at = split_at;
            let context = now.owned.end.saturating_sub(keep_back);
            now.keep = line_start_before(&now.buf, context).max(context.saturating_sub(keep_back));
            let mut next = match buffers.try_recv() {
                Ok(block) => block,
                Err(_) if made <= AHEAD => {
                    made += 1;
                    Block::first(capacity)
                }
                Err(_) => match buffers.recv() {
                    Ok(block) => block,
                    Err(_) => return,
                },
            };
            let keep = now.keep;
            next.buf.clear();
            next.buf.extend_from_slice(&now.buf[keep..]);
            next.owned = now.owned.end - keep..0;
            // Sent before the next window is read, so that a live stream's
            // window is reported before its next block arrives.
            if full.send(now).is_err() {
                return;
            }
            next.read(&mut reader, &cfg);
            base += keep as u64;
            // Where a region split in the window before starts, in this one.
            let next_split = split_at
                .and_then(|a| a.checked_sub(base))
                .map(|a| a as usize);
            match stop.load(std::sync::atomic::Ordering::Relaxed) {
                true => {
                    next.found.clear();
                    (next.carry, next.regions) = (None, None);
                }
                false => {
                    self.search_window(&next.buf, &next.owned, &mut next.found);
                    next.plan(self, next_split);
                }
            }
            now = next;
        }
    }
}

/// How many windows past the one being framed a stream's helper may have
/// read: each is a block of memory ([`ScannerBuilder::block_size`]). One,
/// so two blocks in all, and the helper waits for the block of the window
/// framed before it reads the one after next; a third block, letting it
/// run further ahead, measured no faster on 2 cores and costs 8 MiB more.
const AHEAD: usize = 1;

/// How a stream's window is framed, once its literal pass is done: with
/// its regions when they are known already.
pub(super) type Finish<S> = fn(
    &Scanner,
    &mut State,
    &[u8],
    Range<usize>,
    &Found,
    Option<Vec<regions::Region>>,
    &mut S,
) -> Result<(), <S as Sink>::Error>;

/// One window of a stream: its bytes (the kept context first), the lines
/// it owns, and what its literal pass found.
struct Block {
    buf: Vec<u8>,
    /// Where the owned lines start in `buf` (set before reading) and end.
    owned: Range<usize>,
    /// The stream ended: at its end, or at `error`.
    eof: bool,
    /// A read that failed, ending the stream after the bytes before it.
    error: Option<std::io::Error>,
    found: Found,
    /// Where the owned part ends so that its last region is not cut, and
    /// whether that region was split ([`Scanner::carried_from`]).
    carry: Option<(usize, bool)>,
    /// The regions the owned part frames, once it ends there.
    regions: Option<Vec<regions::Region>>,
    /// Where the window starts in the stream.
    base: u64,
    /// Where the next window starts in this one.
    keep: usize,
    /// Where a region split from one before starts, in the stream
    /// ([`State::split_at`]).
    split_at: Option<u64>,
}

impl Block {
    fn first(capacity: usize) -> Block {
        Block {
            buf: Vec::with_capacity(capacity),
            owned: 0..0,
            eof: false,
            error: None,
            found: Found::default(),
            carry: None,
            regions: None,
            base: 0,
            keep: 0,
            split_at: None,
        }
    }

    /// Plans a window whose literal pass is done: where its owned part
    /// ends, and the regions it then frames (computed once, for both).
    /// The last window frames what it owns, so is not planned.
    fn plan(&mut self, scanner: &Scanner, split_at: Option<usize>) {
        (self.carry, self.regions) = match self.eof {
            true => (None, None),
            false => {
                let (carry, regions) =
                    scanner.carried_from(&self.buf, &self.found.hits, &self.owned, split_at);
                (carry, Some(regions))
            }
        };
    }

    /// Reads a block after the kept bytes and the context after it, and
    /// ends the owned part at the last line end before that context (a
    /// block with no line end, one giant line, is cut where it is). A read
    /// error ends the stream, keeping the bytes read before it.
    fn read<R: Read>(&mut self, reader: &mut R, cfg: &Config) {
        let from = self.owned.start;
        (self.eof, self.error) = match fill(reader, &mut self.buf, from + cfg.block + cfg.forward) {
            Ok(eof) => (eof, None),
            Err(e) => (true, Some(e)),
        };
        let to = if self.eof {
            self.buf.len()
        } else {
            let limit = self.buf.len() - cfg.forward;
            match memchr::memrchr(b'\n', &self.buf[from..limit]) {
                Some(p) => from + p + 1,
                None => limit,
            }
        };
        self.owned = from..to;
    }
}

/// Reads until `buf` holds `want` bytes or the stream ends; true at the end.
/// Reads straight into `buf`'s spare room; on an error, what was read
/// before it is in `buf`.
fn fill<R: Read>(reader: &mut R, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    while buf.len() < want {
        let missing = (want - buf.len()) as u64;
        if reader.by_ref().take(missing).read_to_end(buf)? == 0 {
            return Ok(true);
        }
    }
    Ok(false)
}
