//! The framer on arbitrary bytes: no panic, and every event is a run of
//! whole, in-bounds, increasing lines whose text can be built.
#![no_main]

use cudnnlog::framer::{Event, Framer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut framer = Framer::new();
    let (mut text, mut line_at, mut scratch) = (String::new(), Vec::new(), Vec::new());
    framer.frame(data, 0..data.len(), &mut |ev: &Event<'_>| {
        assert!(!ev.lines.is_empty());
        let mut last = 0;
        for l in ev.lines {
            assert!(l.start <= l.end && l.end <= data.len());
            assert!(l.start >= last);
            last = l.end;
        }
        if let Some(i) = ev.exception {
            assert!(i < ev.lines.len());
        }
        ev.text_into(data, &mut text, &mut line_at, &mut scratch);
        assert_eq!(line_at.len(), ev.lines.len());
    });
});
