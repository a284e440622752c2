//! [`Tee`]: one scan fed to two sinks.

use super::{Copies, EnvFact, Fork, Location, Match, Sink, Window};

/// Feeds one scan to two sinks: the [`FindingsSink`](crate::report::FindingsSink)
/// that builds the report and one of your own (a live view, a counter, an
/// NDJSON stream), without scanning twice.
///
/// The scan goes on while either sink wants more; a sink that returned
/// `false` from [`matched`](Sink::matched) is not given further matches.
/// Both get every window, environment value and unclassified line.
///
/// ```
/// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
/// use cudnnlog::sink::{FnSink, Match, Tee};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut lines = Vec::new();
/// let counter = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
///     lines.push(m.location.line);
///     Ok(true)
/// });
/// let mut tee = Tee::new(FindingsSink::new(scanner.catalog()), counter);
/// let log = b"ok\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
/// scanner.scan_slice(log, &mut tee).unwrap();
/// let (sink, _) = tee.into_inner();
/// assert_eq!(sink.into_report().primary.as_deref(), Some("cuda.illegal_address"));
/// assert_eq!(lines, [2]);
/// ```
pub struct Tee<A, B> {
    a: A,
    b: B,
    a_done: bool,
    b_done: bool,
}

impl<A, B> Tee<A, B> {
    /// Both sinks, fed the same scan.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink, sink::{FnSink, Match, Tee}};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut lines = Vec::new();
    /// let live = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
    ///     lines.push(m.location.line);
    ///     Ok(true)
    /// });
    /// let mut tee = Tee::new(FindingsSink::new(scanner.catalog()), live);
    /// let log = b"INFO train: step 3\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// scanner.scan_slice(log, &mut tee).unwrap();
    /// let report = tee.into_inner().0.into_report();
    /// assert_eq!((report.findings[0].first.line, lines), (2, vec![2]));
    /// ```
    pub fn new(a: A, b: B) -> Tee<A, B> {
        Tee {
            a,
            b,
            a_done: false,
            b_done: false,
        }
    }

    /// The two sinks back, in the order given.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Tee}};
    /// struct Count(usize);
    /// impl Sink for Count {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.0 += 1;
    ///         Ok(true)
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut tee = Tee::new(Count(0), Count(10));
    /// scanner.scan_slice(log, &mut tee).unwrap();
    /// let (a, b) = tee.into_inner();
    /// assert_eq!((a.0, b.0), (2, 12));
    /// ```
    pub fn into_inner(self) -> (A, B) {
        (self.a, self.b)
    }

    /// The first sink.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Tee}};
    /// struct UpTo(usize, usize); // matches wanted, matches seen
    /// impl Sink for UpTo {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.1 += 1;
    ///         Ok(self.1 < self.0)
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut tee = Tee::new(UpTo(1, 0), UpTo(10, 0));
    /// scanner.scan_slice(log, &mut tee).unwrap();
    /// // The first sink stopped after one match; the scan went on for the second.
    /// assert_eq!(tee.first().1, 1);
    /// ```
    pub fn first(&self) -> &A {
        &self.a
    }

    /// The second sink.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Tee}};
    /// struct UpTo(usize, usize); // matches wanted, matches seen
    /// impl Sink for UpTo {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.1 += 1;
    ///         Ok(self.1 < self.0)
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut tee = Tee::new(UpTo(1, 0), UpTo(10, 0));
    /// scanner.scan_slice(log, &mut tee).unwrap();
    /// // The scan went on for the second sink, which saw both matches.
    /// assert_eq!((tee.first().1, tee.second().1), (1, 2));
    /// ```
    pub fn second(&self) -> &B {
        &self.b
    }
}

impl<A: Sink, B: Sink<Error = A::Error>> Sink for Tee<A, B> {
    type Error = A::Error;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, A::Error> {
        if !self.a_done {
            self.a_done = !self.a.matched(m)?;
        }
        if !self.b_done {
            self.b_done = !self.b.matched(m)?;
        }
        Ok(!(self.a_done && self.b_done))
    }

    fn matched_copies(&mut self, group: &[Match<'_>], copies: Copies) -> Result<bool, A::Error> {
        if !self.a_done {
            self.a_done = !self.a.matched_copies(group, copies)?;
        }
        if !self.b_done {
            self.b_done = !self.b.matched_copies(group, copies)?;
        }
        Ok(!(self.a_done && self.b_done))
    }

    fn window_end(&mut self, window: &Window<'_>) -> Result<(), A::Error> {
        self.a.window_end(window)?;
        self.b.window_end(window)
    }

    fn environment(&mut self, fact: &EnvFact<'_>) -> Result<(), A::Error> {
        self.a.environment(fact)?;
        self.b.environment(fact)
    }

    fn unclassified(&mut self, line: &str, at: &Location) -> Result<(), A::Error> {
        self.a.unclassified(line, at)?;
        self.b.unclassified(line, at)
    }

    fn source_end(&mut self, info: &crate::source::SourceInfo) -> Result<(), A::Error> {
        self.a.source_end(info)?;
        self.b.source_end(info)
    }
}

impl<A: Fork, B: Fork + Sink<Error = A::Error>> Fork for Tee<A, B> {
    fn fork(&self) -> Self {
        Tee::new(self.a.fork(), self.b.fork())
    }

    fn join(&mut self, other: Self) {
        self.a.join(other.a);
        self.b.join(other.b);
        self.a_done |= other.a_done;
        self.b_done |= other.b_done;
    }
}
