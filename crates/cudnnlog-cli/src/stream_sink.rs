//! NDJSON streaming: the first match of every finding is written at once,
//! as `{"type":"finding","partial":true,…}`, while the scan goes on (across
//! files and parallel chunks), so a consumer sees results before a huge
//! file is done. The full, diagnosed findings follow when the scan ends.

use cudnnlog::catalog::Severity;
use cudnnlog::ndjson::{Message, Partial};
use cudnnlog::report::FindingsSink;
use cudnnlog::sink::{Copies, EnvFact, Fork, Location, Match, Sink, Window};
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What every fork shares: the findings already announced, and the output.
pub struct Shared {
    seen: Mutex<HashSet<(String, Severity, String)>>,
    out: Mutex<Box<dyn Write + Send>>,
    /// The reader went away (`| head -1`): the scan stops.
    closed: AtomicBool,
    /// An error finding was announced (the exit status once closed).
    saw_error: AtomicBool,
}

impl Shared {
    pub fn new(out: Box<dyn Write + Send>) -> Arc<Shared> {
        Arc::new(Shared {
            seen: Mutex::new(HashSet::new()),
            out: Mutex::new(out),
            closed: AtomicBool::new(false),
            saw_error: AtomicBool::new(false),
        })
    }

    /// Whether any finding was announced.
    pub fn announced(&self) -> bool {
        self.seen.lock().is_ok_and(|s| !s.is_empty())
    }

    /// Whether an error finding was announced before the output closed.
    pub fn saw_error(&self) -> bool {
        self.saw_error.load(Ordering::Relaxed)
    }

    /// Whether the reader of standard output has gone (a pipe whose other
    /// end is closed polls as an error), checked without writing.
    fn reader_gone(&self) -> bool {
        #[cfg(unix)]
        {
            use rustix::event::{poll, PollFd, PollFlags};
            let stdout = std::io::stdout();
            let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
            let zero = rustix::event::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            if poll(&mut fds, Some(&zero)).is_ok() {
                let r = fds[0].revents();
                return r.contains(PollFlags::ERR) || r.contains(PollFlags::HUP);
            }
        }
        false
    }

    /// Whether the output was closed by its reader.
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

/// A [`FindingsSink`] that also announces each finding's first match.
pub struct Streaming<'c> {
    pub inner: FindingsSink<'c>,
    shared: Option<Arc<Shared>>,
    /// The path of the source this sink scans, for the announcements.
    pub path: String,
}

impl<'c> Streaming<'c> {
    /// `shared` is `None` when nothing should be streamed.
    pub fn new(inner: FindingsSink<'c>, shared: Option<Arc<Shared>>) -> Streaming<'c> {
        Streaming {
            inner,
            shared,
            path: String::new(),
        }
    }
}

/// Whether the reader of the announcements is still there.
enum Heard {
    Yes,
    /// It closed the output before this match.
    Closed,
    /// It left while this match was announced.
    Left,
}

impl Streaming<'_> {
    /// Announces `m` when its finding is new.
    fn announce(&self, m: &Match<'_>) -> Heard {
        let Some(shared) = &self.shared else {
            return Heard::Yes;
        };
        if shared.closed() {
            // Nobody reads on: stop the scan.
            return Heard::Closed;
        }
        let key = (m.class.to_string(), m.severity, m.signature.clone());
        let new = shared
            .seen
            .lock()
            .map(|mut s| s.insert(key))
            .unwrap_or(false);
        if !new {
            return Heard::Yes;
        }
        if m.severity == Severity::Error {
            shared.saw_error.store(true, Ordering::Relaxed);
        }
        let line = Message::Partial(Partial::of(m, &self.path));
        if let Ok(mut out) = shared.out.lock() {
            let written = line.write_line(&mut *out).and_then(|_| out.flush());
            if let Err(e) = written {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    shared.closed.store(true, Ordering::Relaxed);
                    return Heard::Left;
                }
            }
        }
        Heard::Yes
    }
}

impl Sink for Streaming<'_> {
    type Error = cudnnlog::Error;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
        match self.announce(m) {
            Heard::Closed => Ok(false),
            Heard::Left => self.inner.matched(m).map(|_| false),
            Heard::Yes => self.inner.matched(m),
        }
    }

    fn matched_copies(
        &mut self,
        group: &[Match<'_>],
        copies: Copies,
    ) -> Result<bool, cudnnlog::Error> {
        // The copies are the first one's: only its matches can be new.
        for m in group {
            match self.announce(m) {
                Heard::Closed => return Ok(false),
                Heard::Left => return self.inner.matched_copies(group, copies).map(|_| false),
                Heard::Yes => {}
            }
        }
        self.inner.matched_copies(group, copies)
    }

    fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
        self.inner.window_end(w)?;
        // A reader that left (`| head -1`) while no new finding was
        // written: stop the scan now rather than at the end of the file.
        if let Some(shared) = &self.shared {
            if shared.closed() || shared.reader_gone() {
                shared.closed.store(true, Ordering::Relaxed);
                return Err(cudnnlog::Error::Io {
                    path: self.path.clone(),
                    source: std::io::ErrorKind::BrokenPipe.into(),
                });
            }
        }
        Ok(())
    }

    fn environment(&mut self, f: &EnvFact<'_>) -> Result<(), cudnnlog::Error> {
        self.inner.environment(f)
    }

    fn unclassified(&mut self, line: &str, at: &Location) -> Result<(), cudnnlog::Error> {
        self.inner.unclassified(line, at)
    }

    fn source_end(&mut self, info: &cudnnlog::source::SourceInfo) -> Result<(), cudnnlog::Error> {
        self.inner.source_end(info)
    }
}

impl Fork for Streaming<'_> {
    fn fork(&self) -> Self {
        Streaming {
            inner: self.inner.fork(),
            shared: self.shared.clone(),
            path: self.path.clone(),
        }
    }

    fn join(&mut self, other: Self) {
        self.inner.join(other.inner);
    }
}
