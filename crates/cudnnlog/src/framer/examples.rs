//! The examples of `framer`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `last_words::last_words`.
#[test]
fn last_words_last_words() -> Result<(), Box<dyn std::error::Error>> {
    use crate::framer::{last_words, Framer};
    let died = b"Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x\nAborted (core dumped)\n";
    let went_on = b"Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x\nFalling back to cpu.\nstep 1 loss 0.3\n";
    for (log, want) in [(&died[..], true), (&went_on[..], false)] {
        let mut seen = None;
        Framer::new().frame(log, 0..log.len(), &mut |ev| {
            if ev.exception.is_some() {
                seen = Some(last_words(log, ev));
            }
        });
        assert_eq!(seen, Some(want));
    }
    Ok(())
}

/// `Framer::new`.
#[test]
fn framer_new() -> Result<(), Box<dyn std::error::Error>> {
    use crate::framer::{EventKind, Framer};
    let log = b"Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\nValueError: bad\nINFO step 2\n";
    let mut kinds = Vec::new();
    Framer::new().frame(log, 0..log.len(), &mut |e| {
        kinds.push((e.kind, e.lines.len()))
    });
    assert_eq!(kinds, [(EventKind::Traceback, 3), (EventKind::Line, 1)]);
    Ok(())
}

/// `text::Event<'_>::text_into`.
#[test]
fn event_text_into() -> Result<(), Box<dyn std::error::Error>> {
    use crate::framer::{Framer, MAX_LINE_TEXT};
    let mut log = vec![b'x'; 4 * MAX_LINE_TEXT];
    log.extend_from_slice(b" CUDNN_STATUS_EXECUTION_FAILED\n");
    let (mut text, mut at, mut scratch) = (String::new(), Vec::new(), Vec::new());
    let mut cut = None;
    Framer::new().frame(&log, 0..log.len(), &mut |ev| {
        cut = Some(ev.text_into(&log, &mut text, &mut at, &mut scratch));
    });
    assert_eq!(cut, Some(true));
    assert!(text.len() < MAX_LINE_TEXT + 16 && text.ends_with("CUDNN_STATUS_EXECUTION_FAILED"));
    Ok(())
}
