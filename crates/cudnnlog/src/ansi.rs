//! Terminal escape sequences: removing them from log text.
//!
//! Logs captured from a terminal carry colour codes (`ESC[31m`), cursor
//! movements from progress bars and, now and then, OSC sequences (window
//! titles, hyperlinks). The matcher sees text without them, and nothing a log
//! contains is ever passed to the user's terminal as a control sequence.

/// Returns true when `bytes` holds an escape byte, so stripping can be skipped.
#[inline]
pub fn has_escape(bytes: &[u8]) -> bool {
    memchr::memchr(0x1b, bytes).is_some()
}

/// Appends `input` to `out` without ANSI escape sequences (CSI, OSC, and
/// two-byte escapes). An unterminated sequence at the end is dropped.
pub fn strip_into(input: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < input.len() {
        let Some(off) = memchr::memchr(0x1b, &input[i..]) else {
            out.extend_from_slice(&input[i..]);
            return;
        };
        out.extend_from_slice(&input[i..i + off]);
        i += off + 1;
        match input.get(i) {
            // CSI: parameters and intermediates, then one final byte 0x40..=0x7e.
            Some(b'[') => {
                i += 1;
                while i < input.len() && !(0x40..=0x7e).contains(&input[i]) {
                    i += 1;
                }
                i += 1;
            }
            // OSC, DCS, SOS, PM, APC: up to BEL or ESC \.
            Some(b']' | b'P' | b'X' | b'^' | b'_') => {
                i += 1;
                while i < input.len() {
                    if input[i] == 0x07 {
                        i += 1;
                        break;
                    }
                    if input[i] == 0x1b && input.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            Some(_) => i += 1,
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip_into;

    fn strip(s: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        strip_into(s, &mut v);
        v
    }

    #[test]
    fn strips_colour_cursor_and_osc() {
        assert_eq!(
            strip(b"\x1b[1;31mRuntimeError\x1b[0m: x"),
            b"RuntimeError: x"
        );
        assert_eq!(strip(b"a\x1b[2Kb\x1b[1Ac"), b"abc");
        assert_eq!(strip(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), b"link");
        assert_eq!(strip(b"keep\x1b"), b"keep");
        assert_eq!(strip(b"\x1b[31"), b"");
        assert_eq!(strip(b"plain"), b"plain");
    }
}

#[cfg(test)]
mod examples;
