//! The two-tier pass with Hyperscan as its first tier (the `hyperscan`
//! cargo feature, off by default; it links the system's `libhs`, from
//! Hyperscan or Vectorscan 5.4+). One FDR search reports every fingerprint
//! of `patterns/prefilter.txt`, where Teddy needs three searchers; the line
//! where one fires is searched with the anchor DFA exactly as the Teddy
//! tier does, so every engine finds the same lines with the same kinds.

use super::literal::{search_from, Found};
use super::prefilter;
use crate::Scanner;
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::ops::Range;

#[repr(C)]
struct HsDatabase {
    _opaque: [u8; 0],
}

#[repr(C)]
struct HsScratch {
    _opaque: [u8; 0],
}

#[repr(C)]
struct HsCompileError {
    message: *const c_char,
    expression: c_int,
}

type MatchHandler =
    unsafe extern "C" fn(c_uint, c_ulonglong, c_ulonglong, c_uint, *mut c_void) -> c_int;

#[link(name = "hs")]
unsafe extern "C" {
    fn hs_compile_lit_multi(
        expressions: *const *const c_char,
        flags: *const c_uint,
        ids: *const c_uint,
        lens: *const usize,
        elements: c_uint,
        mode: c_uint,
        platform: *const c_void,
        db: *mut *mut HsDatabase,
        error: *mut *mut HsCompileError,
    ) -> c_int;
    fn hs_free_compile_error(error: *mut HsCompileError) -> c_int;
    fn hs_free_database(db: *mut HsDatabase) -> c_int;
    fn hs_alloc_scratch(db: *const HsDatabase, scratch: *mut *mut HsScratch) -> c_int;
    fn hs_free_scratch(scratch: *mut HsScratch) -> c_int;
    fn hs_scan(
        db: *const HsDatabase,
        data: *const c_char,
        length: c_uint,
        flags: c_uint,
        scratch: *mut HsScratch,
        on_event: Option<MatchHandler>,
        context: *mut c_void,
    ) -> c_int;
}

const HS_SUCCESS: c_int = 0;
const HS_MODE_BLOCK: c_uint = 1;

/// About the most bytes one `hs_scan` call is given (its length is 32
/// bits; a part runs on to the next newline).
const SCAN_MAX: usize = 1 << 30;

/// A compiled block-mode database of the fingerprints.
#[derive(Debug)]
pub(super) struct Hyperscan {
    db: *mut HsDatabase,
    /// Each fingerprint's length, by id.
    lens: Vec<usize>,
}

// SAFETY: a compiled database is immutable; Hyperscan allows scanning it
// from many threads at once, each with its own scratch (one per scan here).
unsafe impl Send for Hyperscan {}
// SAFETY: as for `Send`.
unsafe impl Sync for Hyperscan {}

impl Drop for Hyperscan {
    fn drop(&mut self) {
        // SAFETY: `db` came from `hs_compile_lit_multi` and is freed once.
        unsafe { hs_free_database(self.db) };
    }
}

/// What a scan's callback needs: the caller's closure, the fingerprints'
/// lengths, and a panic caught before it could cross into C.
struct Context<'f, F> {
    on: &'f mut F,
    lens: &'f [usize],
    /// Where the part being scanned starts in the whole haystack.
    base: usize,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn on_match<F: FnMut(usize)>(
    id: c_uint,
    _from: c_ulonglong,
    to: c_ulonglong,
    _flags: c_uint,
    context: *mut c_void,
) -> c_int {
    // SAFETY: `context` is the `Context<F>` `scan` passed to `hs_scan`,
    // alive and not otherwise borrowed for the whole call.
    let cx = unsafe { &mut *(context as *mut Context<'_, F>) };
    let start = cx.base + to as usize - cx.lens[id as usize];
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (cx.on)(start))) {
        Ok(()) => 0,
        Err(panic) => {
            cx.panic = Some(panic);
            1
        }
    }
}

impl Hyperscan {
    /// Compiles `fingerprints` as literals; `None` when Hyperscan refuses
    /// them (or the CPU lacks what it needs).
    pub(super) fn new(fingerprints: &[Vec<u8>]) -> Option<Hyperscan> {
        let n = c_uint::try_from(fingerprints.len()).ok()?;
        let ptrs: Vec<*const c_char> = fingerprints
            .iter()
            .map(|f| f.as_ptr() as *const c_char)
            .collect();
        let lens: Vec<usize> = fingerprints.iter().map(Vec::len).collect();
        let flags = vec![0 as c_uint; fingerprints.len()];
        let ids: Vec<c_uint> = (0..n).collect();
        let mut db = std::ptr::null_mut();
        let mut error = std::ptr::null_mut();
        // SAFETY: the arrays hold `n` elements each and outlive the call;
        // literals are passed with their lengths (no NUL needed).
        let rc = unsafe {
            hs_compile_lit_multi(
                ptrs.as_ptr(),
                flags.as_ptr(),
                ids.as_ptr(),
                lens.as_ptr(),
                n,
                HS_MODE_BLOCK,
                std::ptr::null(),
                &mut db,
                &mut error,
            )
        };
        if rc != HS_SUCCESS {
            if !error.is_null() {
                // SAFETY: an error the compiler allocated, freed once.
                unsafe { hs_free_compile_error(error) };
            }
            return None;
        }
        Some(Hyperscan { db, lens })
    }

    /// Calls `on` with the start of every fingerprint in `hay`, in order
    /// of where they end; false when Hyperscan could not scan it all (no
    /// scratch memory, an error from the scan), so that the caller searches
    /// it another way.
    fn scan<F: FnMut(usize)>(&self, hay: &[u8], mut on: F) -> bool {
        let mut scratch = std::ptr::null_mut();
        // SAFETY: `db` is a valid database; a null scratch is allocated.
        if unsafe { hs_alloc_scratch(self.db, &mut scratch) } != HS_SUCCESS {
            return false;
        }
        let mut complete = true;
        let mut cx = Context {
            on: &mut on,
            lens: &self.lens,
            base: 0,
            panic: None,
        };
        // Parts cut just before a newline: a fingerprint holds one only as
        // its first byte, so none is cut.
        let mut at = 0;
        while at < hay.len() {
            let end = match at + SCAN_MAX {
                e if e >= hay.len() => hay.len(),
                // A line of over a GiB is cut where it is.
                e => memchr::memchr(b'\n', &hay[e..(e + SCAN_MAX).min(hay.len())])
                    .map_or((e + SCAN_MAX).min(hay.len()), |q| e + q),
            };
            let part = &hay[at..end];
            cx.base = at;
            at = end;
            // SAFETY: `part` is valid for its length (under 2³² bytes), the
            // scratch belongs to this database and this thread, and `cx`
            // outlives the call.
            let rc = unsafe {
                hs_scan(
                    self.db,
                    part.as_ptr() as *const c_char,
                    part.len() as c_uint,
                    0,
                    scratch,
                    Some(on_match::<F>),
                    &mut cx as *mut Context<'_, F> as *mut c_void,
                )
            };
            // The callback stops a scan only to carry a panic out.
            if rc != HS_SUCCESS || cx.panic.is_some() {
                complete = false;
                break;
            }
        }
        // SAFETY: allocated above, freed once.
        unsafe { hs_free_scratch(scratch) };
        if let Some(panic) = cx.panic {
            std::panic::resume_unwind(panic);
        }
        complete
    }
}

impl Scanner {
    /// The Hyperscan first tier, built on first use; `None` when the
    /// fingerprints cannot be built or Hyperscan refuses them.
    pub(super) fn hyperscan(&self) -> Option<&Hyperscan> {
        self.hyperscan
            .get_or_init(|| {
                let anchors = self.line_anchors();
                let fps = prefilter::fingerprints(&anchors, prefilter::parse(prefilter::BUILTIN))?;
                Hyperscan::new(&fps)
            })
            .as_ref()
    }

    /// [`find_candidates`](Scanner::find_candidates)' search with Hyperscan:
    /// the DFA runs only on lines where a fingerprint fired.
    pub(super) fn hyperscan_pass(
        &self,
        hs: &Hyperscan,
        hay: &[u8],
        span: Range<usize>,
        out: &mut Found,
    ) {
        let (ac, kinds) = self.fired_ac();
        // From the newline before the span: a fingerprint may start with it.
        let from = search_from(hay, span.start);
        let mut pos = span.start;
        let before = (out.hits.len(), out.probes.len(), out.errors.len());
        let complete = hs.scan(&hay[from..span.end], |start| {
            let p = from + start;
            // A fingerprint on a line already searched; one that starts
            // with the newline before `pos` is on the line at `pos`.
            if p < pos && !(p + 1 == pos && hay[p] == b'\n') {
                return;
            }
            pos = self.fired_at(ac, kinds, hay, pos..span.end, p, out);
        });
        if !complete {
            // What Hyperscan could not finish, the plain DFA does whole.
            out.rewind(before);
            let (dfa, kinds) = self.scan_ac(usize::MAX);
            self.plain_pass(dfa, kinds, hay, span, out);
        }
    }
}
