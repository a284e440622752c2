//! Bursts counted give what bursts framed copy by copy give: every match
//! of every copy, in order, and the same report, on every driver.

use super::*;
use crate::report::{FindingsSink, Report};
use crate::scan::Found;
use crate::sink::FnSink;
use crate::Match;
use crate::Sink;
use crate::{Catalog, MmapChoice, ScannerBuilder};

const WARNING: &str = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,\n";

fn steps(log: &mut String, from: usize, n: usize) {
    for s in from..from + n {
        log.push_str(&format!("INFO train: step {s} loss 0.5\n"));
    }
}

/// Realistic bursts, each between step lines: one warning (long enough
/// for its region to be split), four ranks' copies in turn, a handled
/// traceback logged at each retry, an exception line alone, a hard-wrapped
/// error, a watchdog timeout per rank, a burst broken part way with CRLF
/// endings, and one cut at the end of the input.
fn bursts() -> Vec<(&'static str, String)> {
    let ranks: String = (0..4)
        .map(|r| {
            WARNING
                .lines()
                .map(|l| format!("[rank{r}]:{l}\n"))
                .collect::<String>()
        })
        .collect();
    let traceback = "Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 88, in step\n    out = model(batch)\n  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1518, in _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\nWARNING retrying with a smaller batch\n";
    let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 101.19 MiB is free.\n";
    let wrapped = "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED while running the convo\nlution forward pass of layer conv2 with input shape [64, 128, 56, 56] and algori\nthm 1; this may be caused by an illegal memory access earlier in the process.\n";
    let watchdog = (0..2)
        .map(|r| format!("[rank{r}]:[E1203 11:58:00.123456 1234 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"))
        .collect::<String>();
    let shapes: [(&str, &str, usize); 6] = [
        ("one warning", WARNING, 6000),
        ("4 ranks", &ranks, 700),
        ("handled traceback", traceback, 400),
        ("exception line", oom, 900),
        ("hard-wrapped", wrapped, 300),
        ("watchdog", &watchdog, 300),
    ];
    let mut out = Vec::new();
    for (name, period, n) in shapes {
        let mut log = String::new();
        steps(&mut log, 1, 3);
        log.push_str(&period.repeat(n));
        steps(&mut log, 4, 3);
        out.push((name, log));
    }
    let mut broken = String::new();
    steps(&mut broken, 1, 2);
    let crlf = WARNING.replace('\n', "\r\n");
    broken.push_str(&crlf.repeat(300));
    broken.push_str("INFO train: step 3 loss 0.5\r\n");
    broken.push_str(&crlf.repeat(300));
    out.push(("broken, CRLF", broken));
    let mut cut = String::new();
    steps(&mut cut, 1, 2);
    cut.push_str(&WARNING.repeat(200));
    cut.push_str(WARNING.lines().next().unwrap());
    out.push(("cut at the end", cut));
    out
}

fn scanner(repeats: bool, small: bool) -> crate::Scanner {
    let mut b = ScannerBuilder::new();
    if small {
        b.block_size(64 << 10)
            .chunk_size(256 << 10)
            .context_before(4096)
            .context_after(4096)
            .lookback(4096);
    }
    b.config.repeats = repeats;
    b.build(Catalog::builtin().unwrap())
}

/// Every match a scan of `log` hands a sink that takes them one by one.
fn matches(s: &crate::Scanner, log: &[u8], stream: bool) -> Vec<String> {
    let mut seen = Vec::new();
    let mut sink = FnSink(|m: &Match<'_>| -> Result<bool, crate::Error> {
        seen.push(format!(
            "{} {} {:?} {} {:?} {:?} {} | {} | {}",
            m.class,
            m.pattern_index,
            m.location,
            m.event_byte,
            m.event,
            m.severity,
            m.signature,
            m.message,
            m.text
        ));
        Ok(true)
    });
    match stream {
        true => s.scan_reader("<test>", log, &mut sink).map(|_| ()),
        false => s.scan_slice(log, &mut sink).map(|_| ()),
    }
    .unwrap();
    seen
}

/// The report of `log` scanned by `driver`: 0 one pass, 1 in parallel, 2
/// streamed, 3 streamed on all cores.
fn report(s: &crate::Scanner, log: &[u8], driver: u8) -> Report {
    let mut sink = FindingsSink::new(s.catalog());
    match driver {
        0 => s.scan_slice(log, &mut sink).map(|_| ()).unwrap(),
        1 => s
            .scan_slice_parallel(log, &mut sink, &|_| {})
            .map(|_| ())
            .unwrap(),
        2 => s.scan_reader("<test>", log, &mut sink).map(|_| ()).unwrap(),
        _ => {
            static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("cudnnlog-repeats-{}-{n}.log", std::process::id()));
            std::fs::write(&path, log).unwrap();
            let scanned = s.scan_path_parallel(&path, MmapChoice::never(), &mut sink, &|_| {});
            std::fs::remove_file(&path).unwrap();
            scanned.map(|_| ()).unwrap();
        }
    }
    let mut r = sink.into_report();
    for source in &mut r.sources {
        (source.path, source.modified) = (String::new(), None);
    }
    r
}

#[test]
fn a_burst_counted_hands_on_every_match_framing_each_copy_does() {
    for small in [false, true] {
        let (on, off) = (scanner(true, small), scanner(false, small));
        for (name, log) in bursts() {
            for stream in [false, true] {
                let want = matches(&off, log.as_bytes(), stream);
                assert!(want.len() >= 200, "{name}: {}", want.len());
                if name == "hard-wrapped" {
                    // The wrap was seen: the error's lines are one message.
                    assert!(want[0].contains("convolution forward pass"), "{}", want[0]);
                }
                let got = matches(&on, log.as_bytes(), stream);
                assert_eq!(
                    got.len(),
                    want.len(),
                    "{name}, small {small}, stream {stream}"
                );
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g, w, "{name}, small {small}, stream {stream}: match {i}");
                }
            }
        }
    }
}

#[test]
fn a_burst_counted_gives_the_report_framing_each_copy_gives_on_every_driver() {
    for small in [false, true] {
        let (on, off) = (scanner(true, small), scanner(false, small));
        for (name, log) in bursts() {
            for driver in 0..4 {
                let want = report(&off, log.as_bytes(), driver);
                assert!(!want.findings.is_empty(), "{name}");
                let got = report(&on, log.as_bytes(), driver);
                // Reports of bursts are long: the first difference.
                let (got, want) = (format!("{got:#?}"), format!("{want:#?}"));
                let diff = got.lines().zip(want.lines()).position(|(g, w)| g != w);
                assert!(
                    diff.is_none() && got.len() == want.len(),
                    "{name}, small {small}, driver {driver}: line {diff:?}: {:?}",
                    diff.map(|i| (got.lines().nth(i), want.lines().nth(i)))
                );
            }
        }
    }
}

#[test]
fn a_burst_is_handed_on_in_a_few_calls() {
    #[derive(Default)]
    struct Calls {
        one: u64,
        bursts: u64,
        copies: u64,
    }
    impl Sink for Calls {
        type Error = crate::Error;
        fn matched(&mut self, _: &Match<'_>) -> Result<bool, crate::Error> {
            self.one += 1;
            Ok(true)
        }
        fn matched_copies(&mut self, group: &[Match<'_>], c: Copies) -> Result<bool, crate::Error> {
            self.bursts += 1;
            self.copies += c.count * group.len() as u64;
            Ok(true)
        }
    }
    let s = scanner(true, false);
    for (name, log) in bursts() {
        let mut calls = Calls::default();
        s.scan_slice(log.as_bytes(), &mut calls).unwrap();
        let all = matches(&scanner(false, false), log.as_bytes(), false).len() as u64;
        assert_eq!(calls.one + calls.copies, all, "{name}");
        // A few copies framed per region, the rest counted. (An untagged
        // line before the watchdog's ranks stays open, so the framer's
        // state repeats, only once 64 lines of others have buried it.)
        assert!(
            calls.bursts >= 1 && calls.one * 5 < all,
            "{name}: {} one by one of {all}",
            calls.one
        );
    }
}

#[test]
fn runs_are_found_only_where_bytes_and_candidates_repeat() {
    let s = scanner(true, false);
    let mut log = String::new();
    steps(&mut log, 1, 2);
    log.push_str(&WARNING.repeat(10));
    // The same candidate lines, a different line between them.
    log.push_str(&WARNING.replace("self.stride", "self.padding").repeat(3));
    log.push_str(&WARNING.repeat(3));
    let hay = log.as_bytes();
    let mut found = Found::default();
    s.find_candidates(hay, 0..hay.len(), &mut found);
    let got = runs(hay, &found.hits, 0..hay.len());
    let start = log.find("/opt").unwrap();
    assert_eq!(
        got,
        [Run {
            start,
            period: WARNING.len(),
            copies: 10
        }]
    );
}
