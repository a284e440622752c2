//! What a line's body looks like, as far as grouping lines into events is
//! concerned.

/// The shape of one line's body (prefixes removed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    Blank,
    /// `Traceback (most recent call last):`.
    TracebackStart,
    /// `Original Traceback (most recent call last):` inside a DataLoader
    /// worker's re-raised exception message.
    InnerTraceback,
    /// IPython's header: `ValueError      Traceback (most recent call last)`.
    IPythonStart,
    ChainMarker,
    /// A traceback frame, `File "x.py", line 3, in f`, not indented: the
    /// first line of a traceback whose header was cut off.
    Frame,
    /// An exception as Python prints it (`torch.OutOfMemoryError: CUDA out
    /// of memory…`, `KeyboardInterrupt`), or another runtime's uncaught
    /// error that carries one (Elixir `** (RuntimeError) …`, a Rust panic).
    Exception,
    Indented,
    CxxRaised,
    CxxFrame,
    CxxWhat,
    Rule,
    Warning,
    Other,
}

/// Name endings of exception classes. A class named exactly like one (an
/// `Error` with no name before it) is not taken for one, except
/// `Exception` itself.
const EXCEPTION_SUFFIXES: &[&[u8]] = &[
    b"Error",
    b"Exception",
    b"Exit",
    b"Failure",
    b"Fault",
    b"Interrupt",
    b"Timeout",
    b"Iteration",
];

pub(super) fn shape(body: &[u8]) -> Shape {
    // PyTorch's DataLoader crash handler ends its message with a NUL byte,
    // which then leads the next line.
    let body = &body[body.iter().take_while(|&&c| c == 0).count()..];
    let trimmed = body.trim_ascii();
    if trimmed.is_empty() {
        return Shape::Blank;
    }
    if body.starts_with(b"Traceback (most recent call last)") {
        return Shape::TracebackStart;
    }
    if body.starts_with(b"Original Traceback (most recent call last)") {
        return Shape::InnerTraceback;
    }
    if body.starts_with(b"During handling of the above exception")
        || body.starts_with(b"The above exception was the direct cause")
    {
        return Shape::ChainMarker;
    }
    if body.starts_with(b"Exception raised from ") {
        return Shape::CxxRaised;
    }
    if body.starts_with(b"frame #") {
        return Shape::CxxFrame;
    }
    if trimmed.starts_with(b"what():") {
        return Shape::CxxWhat;
    }
    if trimmed.len() >= 20 && trimmed.iter().all(|&c| c == b'=') {
        return Shape::Rule;
    }
    if body[0] == b' ' || body[0] == b'\t' {
        // A traceback nested in another program's output (pip's boxed
        // subprocess output) is indented as a whole.
        if trimmed.starts_with(b"Traceback (most recent call last)") {
            return Shape::TracebackStart;
        }
        return Shape::Indented;
    }
    if is_warning_line(body) {
        return Shape::Warning;
    }
    if is_frame(body) {
        return Shape::Frame;
    }
    if is_ipython_start(body) {
        return Shape::IPythonStart;
    }
    if is_exception(body) {
        return Shape::Exception;
    }
    Shape::Other
}

/// `path.py:123: SomethingWarning: message`.
pub(super) fn is_warning_line(body: &[u8]) -> bool {
    let Some(at) = memfind!(body, b"Warning: ") else {
        return false;
    };
    let head = &body[..at];
    // The category name: letters back to ": ".
    let name_start = head
        .iter()
        .rposition(|c| !c.is_ascii_alphanumeric() && *c != b'_')
        .map_or(0, |p| p + 1);
    let before = &head[..name_start];
    let Some(before) = before.strip_suffix(b": ") else {
        return false;
    };
    let digits = before
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    digits > 0 && before[..before.len() - digits].ends_with(b":")
}

/// `File "x.py", line 3, in f` (or `File "x.py", line 3`).
fn is_frame(body: &[u8]) -> bool {
    body.starts_with(b"File \"") && memfind!(&body[6..body.len().min(4096)], b"\", line ").is_some()
}

/// `ValueError                                Traceback (most recent call last)`.
fn is_ipython_start(body: &[u8]) -> bool {
    let Some(at) = memfind!(body, b"Traceback (most recent call last)") else {
        return false;
    };
    let head = &body[..at];
    let name = head.trim_ascii_end();
    head.len() - name.len() >= 2 && exception_name_len(name) == Some(name.len())
}

/// The length of the exception class name `body` starts with: dotted
/// components, the last one ending like an exception class or, in a
/// module-qualified name, capitalised (`torch._dynamo.exc.Unsupported`).
pub(super) fn exception_name_len(body: &[u8]) -> Option<usize> {
    let mut pos = 0;
    let mut dots = 0;
    let mut last_start;
    let mut first_lower = false;
    loop {
        let start = pos;
        match body.get(pos) {
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => pos += 1,
            _ => return None,
        }
        while body
            .get(pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            pos += 1;
        }
        if start == 0 {
            first_lower = body[0].is_ascii_lowercase() || body[0] == b'_';
        }
        last_start = start;
        if body.get(pos) == Some(&b'.')
            && body
                .get(pos + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            pos += 1;
            dots += 1;
            continue;
        }
        break;
    }
    let last = &body[last_start..pos];
    if last.ends_with(b"Warning") {
        return None;
    }
    let suffixed = last == b"Exception"
        || EXCEPTION_SUFFIXES
            .iter()
            .any(|s| last.len() > s.len() && last.ends_with(s));
    let qualified = dots > 0 && first_lower && last[0].is_ascii_uppercase();
    (suffixed || qualified).then_some(pos)
}

/// Whether `body` is an exception line: an exception class name followed
/// by `: ` (or alone on the line, as `KeyboardInterrupt` is), Elixir's
/// `** (RuntimeError) …`, or a Rust panic header.
pub(super) fn is_exception(body: &[u8]) -> bool {
    if let Some(rest) = body.strip_prefix(b"** (") {
        return exception_name_len(rest).is_some_and(|n| rest.get(n) == Some(&b')'));
    }
    if body.starts_with(b"thread '") && memfind!(body, b"' panicked at ").is_some() {
        return true;
    }
    let Some(n) = exception_name_len(body) else {
        return false;
    };
    let rest = &body[n..];
    match rest.first() {
        None => EXCEPTION_SUFFIXES.iter().any(|s| body.ends_with(s)),
        Some(b':') => rest.len() == 1 || matches!(rest[1], b' ' | b'\t'),
        Some(_) => {
            rest.trim_ascii().is_empty()
                && EXCEPTION_SUFFIXES.iter().any(|s| body[..n].ends_with(s))
        }
    }
}

/// The blanks a body starts with.
pub(super) fn indent(body: &[u8]) -> usize {
    body.iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exception_lines() {
        for yes in [
            "RuntimeError: CUDA error: out of memory",
            "torch.OutOfMemoryError: CUDA out of memory.",
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: x",
            "onnxruntime.capi.onnxruntime_pybind11_state.NoSuchFile: [ONNXRuntimeError] : 3",
            "torch._dynamo.exc.Unsupported: call_function",
            "KeyboardInterrupt",
            "MemoryError",
            "Exception: boom",
            "ModuleNotFoundError: No module named 'flash_attn'",
            "StopIteration",
            "LoadError: CUDA error: out of memory (code 2, ERROR_OUT_OF_MEMORY)",
            "** (RuntimeError) CUDA error: out of memory",
            "thread 'main' panicked at src/main.rs:5:10:",
        ] {
            assert!(is_exception(yes.as_bytes()), "{yes}");
        }
        for no in [
            "Error: could not connect",
            "UserWarning: x",
            "torch.Size([3])",
            "Epoch 1: loss 0.5",
            "error: metadata-generation-failed",
            "ValueErrors are bad",
            "INFO: ok",
            "FutureWarning: `x` is deprecated",
            "Traceback (most recent call last):",
            "NCCL_DEBUG=INFO",
            "val_loss: 0.3",
        ] {
            assert!(!is_exception(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(shape(b"File \"a.py\", line 3, in f"), Shape::Frame);
        assert_eq!(
            shape(b"CalledProcessError                        Traceback (most recent call last)"),
            Shape::IPythonStart
        );
        assert_eq!(
            shape(b"NameError: name 'f' is not defined"),
            Shape::Exception
        );
        assert_eq!(shape(b"x.py:3: UserWarning: y"), Shape::Warning);
    }
}
