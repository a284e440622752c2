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
        let one: Finish<S> = |scanner, st, hay, owned, found, sink| {
            scanner.finish_window(st, hay, owned, false, found, sink)
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
    /// Window `k` is framed on this thread (the sink need not be `Send`)
    /// while a helper thread reads window `k + 1` into a second buffer and
    /// runs its literal pass: the sink sees the same calls in the same
    /// order as when the windows are done one after the other.
    ///
    /// `finish` frames a window: [`finish_window`](Scanner::finish_window) on
    /// this thread, or [`finish_window_forked`](Scanner::finish_window_forked) on
    /// all of them for a sink that forks.
    pub(super) fn scan_stream<S: Sink, R: Read + Send>(
        &self,
        name: &str,
        mut reader: R,
        sink: &mut S,
        progress: &dyn Fn(),
        finish: Finish<S>,
    ) -> Result<(SourceInfo, Option<std::io::Error>), S::Error> {
        let cfg = self.config;
        let mut st = State::new();
        // An event may start `back` bytes before the first owned candidate,
        // and its context is looked up `lookback` bytes before that.
        let keep_back = cfg.back + cfg.back.max(cfg.lookback);
        let capacity = keep_back + cfg.block + cfg.forward;
        let mut now = Block::first(capacity);
        now.read(&mut reader, &cfg);
        self.search_window(&now.buf, &now.owned, &mut now.found);
        let mut next = Block::first(capacity);
        loop {
            if now.eof {
                if !st.stopped {
                    let owned = now.owned.clone();
                    finish(self, &mut st, &now.buf, owned, &now.found, sink)?;
                }
                progress();
                let lines = count_lines(&mut st.counter, &now.buf);
                let info = SourceInfo {
                    path: name.to_string(),
                    bytes: st.base + now.buf.len() as u64,
                    lines,
                    modified: None,
                };
                // A read that failed part way (a truncated archive) ends
                // the stream: what came before it was scanned.
                return Ok((info, now.error.take()));
            }
            // What later windows need of this one: the context before, and
            // the unowned rest. The helper copies it and reads more of the
            // stream while this window is framed, so a live stream's window
            // is reported before its next block arrives. The context starts
            // on a line, unless that line began more than `keep_back` before
            // it: a line with no end (a decompression bomb of zeros) is cut,
            // not kept whole, so memory stays bounded.
            // A region that may go on past this window is the next one's
            // (it holds the whole region, as a mapped scan frames it).
            let split_at = st.split_at_in_window();
            if let Some((first, split)) =
                self.carried_from(&now.buf, &now.found.hits, &now.owned, split_at)
            {
                now.owned.end = first;
                st.split_at = split.then_some(st.base + first as u64);
            }
            let context = now.owned.end.saturating_sub(keep_back);
            let keep = line_start_before(&now.buf, context).max(context.saturating_sub(keep_back));
            let stopped = st.stopped;
            let framed = std::thread::scope(|scope| {
                let (next, now_buf, owned_end, reader) =
                    (&mut next, &now.buf, now.owned.end, &mut reader);
                let ahead = scope.spawn(move || {
                    next.buf.clear();
                    next.buf.extend_from_slice(&now_buf[keep..]);
                    next.owned = owned_end - keep..0;
                    next.read(reader, &cfg);
                    if !stopped {
                        self.search_window(&next.buf, &next.owned, &mut next.found);
                    }
                });
                let framed = match stopped {
                    true => Ok(()),
                    false => {
                        let owned = now.owned.clone();
                        finish(self, &mut st, &now.buf, owned, &now.found, sink)
                    }
                };
                ahead
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                framed
            });
            framed?;
            progress();
            let line = st.counter.line_at(&now.buf, keep);
            st.counter = LineCounter::new(line);
            st.base += keep as u64;
            std::mem::swap(&mut now, &mut next);
        }
    }
}

/// How a stream's window is framed, once its literal pass is done.
pub(super) type Finish<S> =
    fn(&Scanner, &mut State, &[u8], Range<usize>, &Found, &mut S) -> Result<(), <S as Sink>::Error>;

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
}

impl Block {
    fn first(capacity: usize) -> Block {
        Block {
            buf: Vec::with_capacity(capacity),
            owned: 0..0,
            eof: false,
            error: None,
            found: Found::default(),
        }
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
