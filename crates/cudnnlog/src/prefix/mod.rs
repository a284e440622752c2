//! Line prefixes: the rank tags, timestamps and log levels that launchers and
//! logging libraries put in front of a message, parsed with `nom`.
//!
//! [`parse_prefix`] peels prefixes off a physical line one after another (a
//! torchrun rank tag, then a glog header, say) and returns what it found and
//! where the message body starts. It never fails: a line with no known prefix
//! has an empty [`Prefix`] and its body starts at byte 0.

use nom::{
    bytes::complete::{take_while, take_while1, take_while_m_n},
    character::complete::one_of,
    combinator::map,
    sequence::preceded,
    IResult,
};

/// How a line names the process that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A distributed rank: `[rank3]:`, `[default3]:`, `[1,3]<stderr>:`.
    Rank(u32),
    /// A process known by host and pid only, as NCCL prints it
    /// (`host:pid:tid [dev] NCCL …`): the hash of `host:pid`; or a
    /// container known by its compose service tag (`trainer-1  | `): the
    /// hash of the service name.
    Process(u64),
}

/// The severity a line's prefix declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// `TRACE`, or glog's verbose `V`.
    Trace,
    /// `DEBUG`, or a glog `D`.
    Debug,
    /// `INFO`, or a glog or TensorFlow `I`.
    Info,
    /// `WARNING` or `WARN`, or a glog or TensorFlow `W`.
    Warning,
    /// `ERROR`, or a glog or TensorFlow `E`.
    Error,
    /// `FATAL` or `CRITICAL`, or a glog or TensorFlow `F`.
    Fatal,
}

impl Level {
    fn from_letter(c: u8) -> Option<Level> {
        Some(match c {
            b'I' => Level::Info,
            b'W' => Level::Warning,
            b'E' => Level::Error,
            b'F' => Level::Fatal,
            b'D' => Level::Debug,
            b'V' | b'T' => Level::Trace,
            _ => return None,
        })
    }
}

/// What the prefixes of one line say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prefix {
    /// The writer, when a rank, NCCL process or container tag names it.
    pub origin: Option<Origin>,
    /// The line's time, when a prefix has one.
    pub timestamp: Option<Timestamp>,
    /// The severity, when a level word or a glog/TensorFlow header gives it.
    pub level: Option<Level>,
    /// Byte offset of the message body within the line.
    pub body: usize,
}

impl Prefix {
    /// True when the line carries a timestamp or a level: a new log record,
    /// not the continuation of a multi-line message.
    pub fn starts_record(&self) -> bool {
        self.timestamp.is_some() || self.level.is_some()
    }
}

/// Parses the prefixes at the start of `line` (ANSI codes already removed).
pub fn parse_prefix(line: &[u8]) -> Prefix {
    let mut p = Prefix::default();
    let mut rest = &line[markup_head(line)..];
    // A container tag comes first, and names the writer unless a rank tag
    // after it is more precise.
    let mut container_origin = None;
    if let Ok((r, o)) = container(rest) {
        container_origin = Some(o);
        rest = r;
    }
    // A prefix kind is taken at most once, in any order (rank tags may
    // repeat: torchrun's `[default3]:[rank3]:`); six rounds are enough for
    // the deepest real stacks (container tag, host, rank, time, level).
    for _ in 0..6 {
        if let Ok((r, o)) = origin(rest) {
            // A rank tag is more precise than a process tag before it.
            if p.origin.is_none() || matches!(o, Origin::Rank(_)) {
                p.origin = Some(o);
                rest = r;
                continue;
            }
        }
        if p.timestamp.is_none() {
            if let Ok((r, (ts, lvl))) = glog(rest) {
                p.timestamp = Some(ts);
                p.level = p.level.or(lvl);
                rest = r;
                continue;
            }
            if let Ok((r, (ts, lvl))) = tf_header(rest) {
                p.timestamp = Some(ts);
                p.level = p.level.or(Some(lvl));
                rest = r;
                continue;
            }
            if let Ok((r, ts)) = timestamp_field(rest) {
                p.timestamp = Some(ts);
                rest = r;
                continue;
            }
        }
        if p.level.is_none() {
            if let Ok((r, lvl)) = level_word(rest) {
                p.level = Some(lvl);
                rest = r;
                continue;
            }
        }
        break;
    }
    p.origin = p.origin.or(container_origin);
    p.body = line.len() - rest.len();
    p
}

/// Markup of pasted text before a log line, as issue threads show logs:
/// markdown quote markers (`> `, nested), a code fence (alone, with its
/// language, or glued to the first line: ```` ```Traceback ````), an inline
/// code mark (`` `ComfyUI\…: UserWarning: ``), HTML `<pre>`/`<code>`. Returns
/// the bytes to skip.
fn markup_head(line: &[u8]) -> usize {
    let mut at = 0;
    for _ in 0..8 {
        let rest = &line[at..];
        if let Some(r) = rest.strip_prefix(b">") {
            if r.is_empty() || r[0] == b' ' || r[0] == b'>' {
                at += 1 + usize::from(r.first() == Some(&b' '));
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix(b"```") {
            // A fence alone or with its language is a blank line.
            let word = r
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
                .count();
            at += 3 + if r[word..].trim_ascii().is_empty() {
                r.len()
            } else {
                0
            };
            continue;
        }
        if rest.len() > 1 && rest[0] == b'`' && rest[1] != b'`' {
            at += 1;
            continue;
        }
        if let Some(tag) = [&b"<pre>"[..], b"</pre>", b"<code>", b"</code>"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            at += tag.len();
            continue;
        }
        break;
    }
    at
}

/// The length of markup of pasted text that ends `body`: a closing code
/// fence or inline code mark, `</pre>`, `</code>`.
pub fn markup_tail(body: &[u8]) -> usize {
    for tag in [&b"```"[..], b"</pre>", b"</code>"] {
        if body.ends_with(tag) {
            return tag.len();
        }
    }
    // A single closing backtick with no opening one on the line.
    if body.ends_with(b"`")
        && !body.ends_with(b"``")
        && memchr::memchr_iter(b'`', body).count() % 2 == 1
    {
        return 1;
    }
    0
}

type Res<'a, T> = IResult<&'a [u8], T>;

fn digits(i: &[u8]) -> Res<'_, &[u8]> {
    take_while1(|c: u8| c.is_ascii_digit())(i)
}

fn num_n(n: usize) -> impl Fn(&[u8]) -> Res<'_, u32> {
    move |i| {
        map(
            take_while_m_n(n, n, |c: u8| c.is_ascii_digit()),
            |d: &[u8]| d.iter().fold(0u32, |a, c| a * 10 + u32::from(c - b'0')),
        )(i)
    }
}

fn parse_u64(d: &[u8]) -> u64 {
    d.iter()
        .take(19)
        .fold(0u64, |a, c| a * 10 + u64::from(c - b'0'))
}

fn frac(i: &[u8]) -> Res<'_, (u64, u8)> {
    map(preceded(one_of(".,"), digits), |d: &[u8]| {
        let d = &d[..d.len().min(18)];
        (parse_u64(d), d.len() as u8)
    })(i)
}

fn spaces(i: &[u8]) -> Res<'_, &[u8]> {
    take_while(|c: u8| c == b' ' || c == b'\t')(i)
}

pub(crate) mod cache;
mod tags;
pub(crate) mod time;

use tags::{container, origin};
use time::{glog, level_word, tf_header, timestamp_field};
pub use time::{Timestamp, Zone};

#[cfg(test)]
mod tests {
    use super::*;

    fn body(line: &str) -> (&str, Prefix) {
        let p = parse_prefix(line.as_bytes());
        (&line[p.body..], p)
    }

    #[test]
    fn kernel_log_and_lightning_prefixes() {
        let (b, p) =
            body("[Sat Nov 29 19:41:10 2026] Out of memory: Killed process 4242 (python3)");
        assert_eq!(b, "Out of memory: Killed process 4242 (python3)");
        assert_eq!(p.timestamp.unwrap().to_string(), "2026-11-29T19:41:10");
        let (b, p) =
            body("Nov  9 19:41:10 node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242");
        assert_eq!(b, "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242");
        assert_eq!(p.timestamp.unwrap().to_string(), "--11-09T19:41:10");
        let (b, _) = body("Nov 29 19:41:10 node-7 python3[4242]: segfault at 0 ip 00007f");
        assert_eq!(b, "segfault at 0 ip 00007f");
        let (b, p) = body("[rank: 1] Epoch 3: loss = nan");
        assert_eq!(b, "Epoch 3: loss = nan");
        assert_eq!(p.origin, Some(Origin::Rank(1)));
        // Prose that starts with a month is not a syslog header.
        let (b, _) = body("Nov 29 was the day the run failed");
        assert_eq!(b, "Nov 29 was the day the run failed");
    }

    #[test]
    fn compose_service_tags() {
        let (b, p) = body("trainer-1  | [rank1]: torch.OutOfMemoryError: CUDA out of memory.");
        assert_eq!(b, "torch.OutOfMemoryError: CUDA out of memory.");
        assert_eq!(p.origin, Some(Origin::Rank(1)));
        let (b, p) = body("worker_2    | 2026-11-29 19:40:51,487 ERROR boom");
        assert_eq!(b, "boom");
        assert!(matches!(p.origin, Some(Origin::Process(_))));
        assert_eq!(p.level, Some(Level::Error));
        let (b, p) = body("trainer-1  |");
        assert_eq!(b, "");
        assert!(p.origin.is_some());
        // Table rows and shell pipes are not tags.
        for line in [
            "epoch  | loss | acc",
            "step_x | 12",
            "cat a | grep b",
            "-1 | x",
        ] {
            let (b, _) = body(line);
            assert_eq!(b, line);
        }
    }

    #[test]
    fn python_logging() {
        let (b, p) = body("2026-11-29 19:40:51,487 INFO train: torch 2.11.0+cu130");
        assert_eq!(b, "train: torch 2.11.0+cu130");
        assert_eq!(p.level, Some(Level::Info));
        assert_eq!(p.timestamp.unwrap().to_string(), "2026-11-29T19:40:51.487");
    }

    #[test]
    fn iso_with_zone_and_brackets() {
        let (b, p) =
            body("[2026-11-29 19:42:50] vm:834:834 [0] init.cc:904 NCCL WARN Duplicate GPU");
        assert_eq!(b, "init.cc:904 NCCL WARN Duplicate GPU");
        assert_eq!(p.timestamp.unwrap().to_string(), "2026-11-29T19:42:50");
        assert!(matches!(p.origin, Some(Origin::Process(_))));
        let (b, p) = body("2026-11-29T19:41:10.166Z ERROR boom");
        assert_eq!(b, "boom");
        assert_eq!(p.level, Some(Level::Error));
    }

    #[test]
    fn glog_plain_and_bracketed() {
        let (b, p) = body("E1129 19:46:54.456820794 12345 file.cc:689] Something failed");
        assert_eq!(b, "Something failed");
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(
            p.timestamp.unwrap().to_string(),
            "--11-29T19:46:54.456820794"
        );
        let (b, p) = body("W1129 19:42:45.975000 812 torch/distributed/run.py:851] ****");
        assert_eq!(b, "****");
        assert_eq!(p.level, Some(Level::Warning));
        let (b, p) =
            body("[rank1]:[W1129 19:42:50.620559165 ProcessGroupNCCL.cpp:1575] Warning: x");
        assert_eq!(b, "Warning: x");
        assert_eq!(p.origin, Some(Origin::Rank(1)));
    }

    #[test]
    fn c10_month_day_is_not_padded_before_october() {
        // PyTorch's c10 logger writes (month + 1) * 100 + day: 623 is 23 June.
        let (b, p) = body("[rank0]:[E623 05:45:04.413715744 ProcessGroupNCCL.cpp:704] [Rank 0] Watchdog caught collective operation timeout");
        assert_eq!(b, "[Rank 0] Watchdog caught collective operation timeout");
        assert_eq!(
            (p.level, p.origin),
            (Some(Level::Error), Some(Origin::Rank(0)))
        );
        assert_eq!(
            p.timestamp.unwrap().to_string(),
            "--06-23T05:45:04.413715744"
        );
        let ts = |l: &str| parse_prefix(l.as_bytes()).timestamp.map(|t| t.to_string());
        assert_eq!(
            ts("I105 00:00:01.5 f.cc:1] x").as_deref(),
            Some("--01-05T00:00:01.5")
        );
        // The padded glog form of the same day reads the same.
        assert_eq!(
            ts("[E0623 05:45:04.413715744 ProcessGroupNCCL.cpp:704] x"),
            ts("[E623 05:45:04.413715744 ProcessGroupNCCL.cpp:704] x")
        );
        // Numbers that make no month and day are no header.
        for line in [
            "E1300 05:45:04.1 f.cc:1] x",
            "E600 05:45:04.1 f.cc:1] x",
            "E12345 05:45:04.1 f.cc:1] x",
            "E62 05:45:04.1 f.cc:1] x",
        ] {
            assert_eq!(ts(line), None, "{line}");
        }
    }

    #[test]
    fn tensorflow_header() {
        let (b, p) = body("2023-01-01 12:00:00.123456: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle");
        assert_eq!(b, "Could not create cudnn handle");
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(
            p.timestamp.unwrap().to_string(),
            "2023-01-01T12:00:00.123456"
        );
    }

    #[test]
    fn dmesg_uptime() {
        let (b, p) =
            body("[ 4821.553190] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
        assert_eq!(
            b,
            "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."
        );
        assert_eq!(p.timestamp.unwrap().to_string(), "+4821.553190s");
    }

    #[test]
    fn rank_prefixes() {
        let (b, p) = body("[rank3]:   File \"x.py\", line 1, in <module>");
        assert_eq!(b, "  File \"x.py\", line 1, in <module>");
        assert_eq!(p.origin, Some(Origin::Rank(3)));
        assert!(!p.starts_record());
        let (b, p) = body("[default0]:Traceback (most recent call last):");
        assert_eq!(b, "Traceback (most recent call last):");
        assert_eq!(p.origin, Some(Origin::Rank(0)));
        // Open MPI: `[jobid,rank]`.
        let (b, p) = body("[1,0]<stderr>:RuntimeError: CUDA error");
        assert_eq!(b, "RuntimeError: CUDA error");
        assert_eq!(p.origin, Some(Origin::Rank(0)));
        let (_, p) = body("[1,3]<stdout>:step 2");
        assert_eq!(p.origin, Some(Origin::Rank(3)));
    }

    #[test]
    fn nccl_process_tag_separates_processes() {
        let a = parse_prefix(b"vm:833:833 [0] NCCL INFO Using network Socket");
        let b = parse_prefix(b"vm:834:834 [0] NCCL INFO Using network Socket");
        assert_ne!(a.origin, b.origin);
        assert_eq!(
            &b"vm:833:833 [0] NCCL INFO Using network Socket"[a.body..],
            b"NCCL INFO Using network Socket"
        );
    }

    #[test]
    fn no_prefix_and_lookalikes() {
        for line in [
            "Traceback (most recent call last):",
            "INFORMATION follows",
            "  File \"a.py\", line 3",
            "Epoch 0/1  32/32",
            "",
            "E",
            "[rank",
        ] {
            let (b, p) = body(line);
            assert_eq!(b, line, "{line:?}");
            assert_eq!(p, Prefix::default());
        }
    }

    #[test]
    fn launcher_and_worker_tags() {
        let ray = parse_prefix(b"(RayTrainWorker pid=4242, ip=10.0.0.7) KeyError: 'x'");
        assert!(matches!(ray.origin, Some(Origin::Process(_))));
        assert_eq!(body("(pid=4242) step 3").0, "step 3");
        assert_ne!(
            parse_prefix(b"(pid=1) x").origin,
            parse_prefix(b"(pid=2) x").origin
        );
        // A parenthesised remark is no tag.
        assert_eq!(body("(see below) x").0, "(see below) x");
        assert_eq!(
            parse_prefix(b"  3: RuntimeError: x").origin,
            Some(Origin::Rank(3))
        );
        assert_eq!(
            body("worker-3: Traceback (most recent call last):").0,
            "Traceback (most recent call last):"
        );
        assert_eq!(body("RuntimeError: x").0, "RuntimeError: x");
        assert_eq!(body("loss: 0.5").0, "loss: 0.5");
        assert_eq!(
            parse_prefix(b"[default3]:[rank3]: x").origin,
            Some(Origin::Rank(3))
        );
        assert_eq!(
            parse_prefix(b"worker-0: [rank5]: x").origin,
            Some(Origin::Rank(5))
        );
        let p = parse_prefix(b"2026-11-30 15:17:22,456 INFO rank1: step 0");
        assert_eq!(p.origin, Some(Origin::Rank(1)));
    }

    #[test]
    fn markup_of_pasted_text() {
        assert_eq!(body("> > RuntimeError: x").0, "RuntimeError: x");
        assert_eq!(
            body("```Traceback (most recent call last):").0,
            "Traceback (most recent call last):"
        );
        assert_eq!(body("```python").0, "");
        assert_eq!(
            body("`C:\\a.py:3: UserWarning: x").0,
            "C:\\a.py:3: UserWarning: x"
        );
        assert_eq!(body("<pre>RuntimeError: x").0, "RuntimeError: x");
        assert_eq!(markup_tail(b"x</pre>"), 6);
    }

    #[test]
    fn level_word_forms() {
        assert_eq!(body("[WARNING] low memory").0, "low memory");
        assert_eq!(body("ERROR: boom").0, "boom");
        assert_eq!(body("| ERROR | boom").0, "boom");
        assert_eq!(body("WARNING:root:x").0, "root:x");
    }
}

#[cfg(test)]
mod examples;
