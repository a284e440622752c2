//! The streamed scan: a pipe, a compressed log, a file still being
//! written. Windows of `block_size` bytes keep the context before them;
//! while one window is framed, the next one's literal pass runs on the
//! other cores.

use super::window::Block;
use super::window::Finish;
use crate::scan::end_source;
use crate::scan::regions;
use crate::scan::state::State;
use crate::scan::Found;
use crate::source::Fill;
use crate::source::Reader;
use crate::Error;
use crate::Scanner;
use crate::Sink;
use crate::SourceInfo;
use std::io::Read;
use std::ops::Range;

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
        let (info, cut) = self.scan_stream(name, Reader(reader), sink, &|| {}, on_this_thread)?;
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
    /// all of them for a sink that forks. A regular file scanned into a sink
    /// that forks has a driver of its own, with no helper
    /// ([`scan_positioned`](Scanner::scan_positioned)); this one serves pipes,
    /// compressed files, and sinks that do not fork, whose framing stays on
    /// this thread while a read may block.
    pub(super) fn scan_stream<S: Sink, F: Fill>(
        &self,
        name: &str,
        reader: F,
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
                now.frame(self, &mut st, sink, finish)?;
                // Once the sink has all it wants, later windows are read
                // but not searched.
                stop.store(st.stopped, std::sync::atomic::Ordering::Relaxed);
                progress();
                if now.eof {
                    return Ok(now.end(&mut st, name));
                }
                now.pass_on(&mut st);
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
    fn read_windows<F: Fill>(
        &self,
        mut reader: F,
        buffers: std::sync::mpsc::Receiver<Block>,
        full: std::sync::mpsc::SyncSender<Block>,
        stop: &std::sync::atomic::AtomicBool,
    ) {
        let cfg = self.config;
        let mut made = 1;
        let mut now = Block::first();
        now.read(&mut reader, &cfg);
        now.prepare(self, false, None);
        let (mut base, mut split_at) = (0u64, None);
        loop {
            now.base = base;
            if now.eof {
                now.split_at = split_at;
                let _ = full.send(now);
                return;
            }
            now.hand_on(&cfg, &mut split_at);
            let mut next = match buffers.try_recv() {
                Ok(block) => block,
                Err(_) if made <= AHEAD => {
                    made += 1;
                    Block::first()
                }
                Err(_) => match buffers.recv() {
                    Ok(block) => block,
                    Err(_) => return,
                },
            };
            next.keep_from(&now);
            // Sent before the next window is read, so that a live stream's
            // window is reported before its next block arrives.
            let now_keep = now.keep;
            if full.send(now).is_err() {
                return;
            }
            next.read(&mut reader, &cfg);
            base += now_keep as u64;
            let stopped = stop.load(std::sync::atomic::Ordering::Relaxed);
            next.prepare(self, stopped, Block::split_in(split_at, base));
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

/// A [`Finish`] that frames a window on the calling thread
/// ([`finish_window`](Scanner::finish_window)), for a sink that does not
/// fork.
pub(super) fn on_this_thread<S: Sink>(
    scanner: &Scanner,
    st: &mut State,
    hay: &[u8],
    owned: Range<usize>,
    found: &Found,
    regions: Option<Vec<regions::Region>>,
    sink: &mut S,
) -> Result<(), S::Error> {
    scanner.finish_window(st, hay, owned, false, found, regions, sink)
}
