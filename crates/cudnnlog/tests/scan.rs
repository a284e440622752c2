//! Scanning behaviour: real logs, streaming versus memory, events that
//! straddle block boundaries.

use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, Report, ScannerBuilder};

const OOM: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log");
const LIGHTNING: &[u8] =
    include_bytes!("../../../fixtures/real/h200-lightning-oom-progress-bar.log");
const DUP_GPU: &[u8] =
    include_bytes!("../../../fixtures/real/h200-torchrun-nccl-duplicate-gpu.log");

fn report_slice(bytes: &[u8]) -> Report {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(bytes, &mut sink).unwrap();
    sink.into_report()
}

/// The report of `bytes` scanned on all threads in chunks of `chunk` bytes.
fn report_in_chunks(bytes: &[u8], chunk: usize) -> Report {
    let scanner = ScannerBuilder::new()
        .chunk_size(chunk)
        .build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_slice_parallel(bytes, &mut sink, &|_| {})
        .unwrap();
    sink.into_report()
}

fn report_slice_with(bytes: &[u8], context: usize) -> Report {
    let scanner = ScannerBuilder::new()
        .context_before(context)
        .lookback(context)
        .context_after(context)
        .build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(bytes, &mut sink).unwrap();
    sink.into_report()
}

fn report_stream(bytes: &[u8], block: usize, context: usize) -> Report {
    let scanner = ScannerBuilder::new()
        .block_size(block)
        .context_before(context)
        .lookback(context)
        .context_after(context)
        .build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_reader("<memory>", bytes, &mut sink).unwrap();
    sink.into_report()
}

#[test]
fn pytorch_oom_is_found_with_its_place_and_numbers() {
    let r = report_slice(OOM);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(
        (f.first.line, f.first.epoch, f.first.step),
        (29, Some(2), Some(3))
    );
    assert_eq!(
        f.first.timestamp.as_deref(),
        Some("2026-11-29T19:41:04.724")
    );
    assert!(f
        .message
        .starts_with("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB"));
    assert_eq!(
        f.facts["requested_bytes"],
        cudnnlog::report::Fact::Int(1_642_824_991)
    );
    assert_eq!(r.sources[0].lines, 29);
}

#[test]
fn lightning_oom_after_progress_bar_redraws() {
    let r = report_slice(LIGHTNING);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    let f = &r.findings[0];
    assert_eq!((f.first.line, f.first.epoch), (89, Some(0)));
    assert_eq!(
        f.facts["requested_bytes"],
        cudnnlog::report::Fact::Int(64 << 30)
    );
    // A single 64 GiB request above a 6.99 GiB allowance: the input is too big.
    let top: Vec<&str> = f.causes.iter().take(2).map(|c| c.id.as_str()).collect();
    assert!(top.contains(&"input_shape"), "{top:?}");
}

/// Real failures buried in filler so that tracebacks straddle blocks and
/// chunks.
fn buried_failures() -> Vec<u8> {
    let mut log = Vec::new();
    for (i, part) in [OOM, LIGHTNING, DUP_GPU, OOM].iter().enumerate() {
        for j in 0..(700 + 37 * i) {
            log.extend_from_slice(
                format!(
                    "2026-11-29 19:40:{:02},000 INFO train: filler line {j}\n",
                    j % 60
                )
                .as_bytes(),
            );
        }
        log.extend_from_slice(part);
    }
    log
}

#[test]
fn streaming_in_small_blocks_gives_the_same_report() {
    let log = buried_failures();
    let whole = report_slice(&log);
    assert!(
        whole
            .findings
            .iter()
            .any(|f| f.class == "cuda.oom" && f.count == 3),
        "{whole:#?}"
    );
    for (block, context) in [(4096, 4096), (5000, 20000), (1 << 20, 64 << 10)] {
        let mut streamed = report_stream(&log, block, context);
        let whole = report_slice_with(&log, context);
        streamed.sources[0].path = whole.sources[0].path.clone();
        assert_eq!(streamed, whole, "block {block}, context {context}");
    }
}

#[test]
fn crlf_and_invalid_utf8_do_not_hide_an_error() {
    let mut log = b"\xff\xfe garbage \x00\x01\r\n".to_vec();
    log.extend_from_slice(
        &OOM.iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect::<Vec<u8>>(),
    );
    let r = report_slice(&log);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(r.findings[0].first.line, 30);
}

#[test]
fn empty_input_is_clean() {
    let r = report_slice(b"");
    assert!(r.findings.is_empty());
    assert_eq!((r.sources[0].bytes, r.sources[0].lines), (0, 0));
}

/// What a finding says, apart from where: a mangled copy of a log must say
/// the same.
fn gist(r: &Report) -> Vec<String> {
    r.findings
        .iter()
        .map(|f| {
            format!(
                "{} {:?} x{} ranks={:?} facts={:?} step={:?} message={}",
                f.class, f.severity, f.count, f.ranks, f.facts, f.first.step, f.message
            )
        })
        .collect()
}

#[test]
fn hard_wrapped_console_logs_give_the_same_findings() {
    // `fold -w 80` / `fold -w 120` of real captures (fixtures/derived/make.sh).
    let pairs: [(&[u8], &[u8]); 2] = [
        (
            OOM,
            include_bytes!("../../../fixtures/derived/h200-torch-oom-amp-train.wrapped80.log"),
        ),
        (
            include_bytes!("../../../fixtures/gpu/h200-g06_torch_illegal_address.log"),
            include_bytes!(
                "../../../fixtures/derived/h200-g06_torch_illegal_address.wrapped120.log"
            ),
        ),
    ];
    for (original, wrapped) in pairs {
        let (a, b) = (report_slice(original), report_slice(wrapped));
        assert!(!a.findings.is_empty());
        assert_eq!(gist(&a), gist(&b));
    }
}

#[test]
fn compose_prefixes_and_crlf_give_the_same_findings() {
    let pairs: [(&[u8], &[u8]); 2] = [
        (
            include_bytes!("../../../fixtures/gpu/h200-g17_torchrun_oom_cascade.log"),
            include_bytes!("../../../fixtures/derived/h200-g17_torchrun_oom_cascade.compose.log"),
        ),
        (
            include_bytes!("../../../fixtures/gpu/h200-g09_torch_device_mismatch.log"),
            include_bytes!("../../../fixtures/derived/h200-g09_torch_device_mismatch.crlf.log"),
        ),
    ];
    for (original, mangled) in pairs {
        let (a, b) = (report_slice(original), report_slice(mangled));
        assert!(!a.findings.is_empty());
        assert_eq!(gist(&a), gist(&b));
    }
}

#[test]
fn an_exact_width_line_in_an_unwrapped_log_is_not_joined() {
    // The code line is exactly 80 bytes; the log has longer lines, so it was
    // not wrapped, and the exception line stays a line of its own.
    let code = format!("    {}", "x".repeat(76));
    assert_eq!(code.len(), 80);
    let log = format!(
        "Traceback (most recent call last):\n  File \"/home/user/train/t.py\", line 3, in <module>\n{code}\n\
         RuntimeError: CUDA error: an illegal memory access was encountered\n{}\n",
        "y".repeat(200)
    );
    let r = report_slice(log.as_bytes());
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
}

#[test]
fn a_symptom_outranks_the_status_it_carries() {
    let log = b"2019-05-22 14:03:11.448913: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n";
    let r = report_slice(log);
    let classes: Vec<&str> = r.findings.iter().map(|f| f.class.as_str()).collect();
    assert_eq!(classes, ["cudnn.not_initialized", "cudnn.internal_error"]);
    assert_eq!(r.primary.as_deref(), Some("cudnn.not_initialized"));
}

#[test]
fn parallel_chunks_give_the_same_report() {
    // Chunks of 97 bytes cut every traceback; 4 KiB and 1 MiB ones some.
    let mut log = buried_failures();
    log.extend_from_slice(include_bytes!(
        "../../../fixtures/gpu/h200-g17_torchrun_oom_cascade.log"
    ));
    log.extend_from_slice(include_bytes!(
        "../../../fixtures/real/h200-collect-env-nvidia-smi.log"
    ));
    let whole = report_slice(&log);
    assert!(!whole.environment.is_empty());
    for chunk in [97, 4096, 1 << 20] {
        let scanner = ScannerBuilder::new()
            .chunk_size(chunk)
            .build(Catalog::builtin().unwrap());
        let mut sink = FindingsSink::new(scanner.catalog());
        let done = std::sync::atomic::AtomicU64::new(0);
        scanner
            .scan_slice_parallel(&log, &mut sink, &|n| {
                done.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
            })
            .unwrap();
        let parallel = sink.into_report();
        assert_eq!(parallel, whole, "chunk {chunk}");
        assert_eq!(done.into_inner(), log.len() as u64);
    }
}

#[test]
fn a_traceback_longer_than_the_context_is_still_one_event() {
    // About 100 KB of frames (a deep recursion), longer than the 64 KiB of
    // context before a candidate line: the `Traceback` line is a candidate
    // too, so the event is framed whole.
    let mut log = String::from(
        "2026-11-29 19:41:04,724 INFO train: epoch 2 step 3\nTraceback (most recent call last):\n",
    );
    for i in 0..1200 {
        log.push_str(&format!("  File \"/home/user/train/model.py\", line {i}, in forward\n    return self.block(x)\n"));
    }
    log.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n");
    assert!(log.len() > 90_000);
    for r in [
        report_slice(log.as_bytes()),
        report_stream(log.as_bytes(), 4096, 256 << 10),
    ] {
        let classes: Vec<&str> = r.findings.iter().map(|f| f.class.as_str()).collect();
        assert_eq!(classes, ["cuda.oom"], "{:#?}", r.findings);
        assert_eq!(r.findings[0].first.step, Some(3));
    }
}

/// The fuzz target's scanner: tiny blocks, contexts and chunks, so that
/// small inputs cross every boundary.
fn small_context_scanner() -> cudnnlog::Scanner {
    ScannerBuilder::new()
        .block_size(4096)
        .context_before(1024)
        .context_after(1024)
        .lookback(1024)
        .chunk_size(777)
        .build(Catalog::builtin().unwrap())
}

/// The report of one scan into a fresh sink, its source path blanked.
fn report_of(
    scanner: &cudnnlog::Scanner,
    scan: &dyn Fn(&mut FindingsSink<'_>) -> cudnnlog::source::SourceInfo,
) -> Report {
    let mut sink = FindingsSink::new(scanner.catalog());
    scan(&mut sink);
    let mut report = sink.into_report();
    for s in &mut report.sources {
        s.path = String::new();
    }
    report
}

/// Inputs the fuzzer found (`fuzz/regressions/`): scanning in memory, as a
/// stream in small blocks and in parallel chunks must agree, with the
/// fuzz target's small contexts.
#[test]
fn fuzz_regressions_agree_three_ways() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let scanner = small_context_scanner();
    let run =
        |f: &dyn Fn(&mut FindingsSink<'_>) -> cudnnlog::source::SourceInfo| report_of(&scanner, f);
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        let slice = run(&|s| scanner.scan_slice(&data, s).unwrap());
        let stream = run(&|s| scanner.scan_reader("", &data[..], s).unwrap());
        let parallel = run(&|s| scanner.scan_slice_parallel(&data, s, &|_| {}).unwrap());
        let brief = |r: &Report| {
            r.findings
                .iter()
                .map(|f| (f.class.clone(), f.first.byte, f.first.step))
                .collect::<Vec<_>>()
        };
        assert_eq!(brief(&slice), brief(&stream), "slice vs stream");
        assert_eq!(brief(&slice), brief(&parallel), "slice vs parallel");
        assert_eq!(slice, stream);
        assert_eq!(slice, parallel);
    }
}

/// A stable stand-in for the fuzzer in `cargo test`: pieces of real logs
/// cut, spliced and sprinkled with noise (NUL, `\r`, invalid UTF-8, ANSI)
/// must give exactly the same report in memory and in parallel chunks, and
/// the same classes streamed.
#[test]
fn spliced_real_logs_agree_three_ways() {
    let pieces: [&[u8]; 4] = [
        OOM,
        LIGHTNING,
        DUP_GPU,
        include_bytes!("../../../fixtures/gpu/h200-g17_torchrun_oom_cascade.log"),
    ];
    let scanner = small_context_scanner();
    let run =
        |f: &dyn Fn(&mut FindingsSink<'_>) -> cudnnlog::source::SourceInfo| report_of(&scanner, f);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for _ in 0..200 {
        let mut data = Vec::new();
        for _ in 0..1 + next(4) {
            let p = pieces[next(pieces.len())];
            let a = next(p.len());
            let b = (a + next(6000)).min(p.len());
            data.extend_from_slice(&p[a..b]);
            let noise: &[&[u8]] = &[b"\0\0", b"\r", b"\xff\xfe", b"\x1b[31m", b"\n\n", b""];
            data.extend_from_slice(noise[next(noise.len())]);
        }
        let slice = run(&|s| scanner.scan_slice(&data, s).unwrap());
        let stream = run(&|s| scanner.scan_reader("", &data[..], s).unwrap());
        let parallel = run(&|s| scanner.scan_slice_parallel(&data, s, &|_| {}).unwrap());
        // In memory, chunked or not: the same report, exactly.
        assert_eq!(
            slice,
            parallel,
            "parallel differs on {:?}",
            String::from_utf8_lossy(&data)
        );
        // A stream frames each block with bounded context; with contexts
        // this small it may split an event differently (docs/robustness.md),
        // but it must survive and keep the classes.
        let classes = |r: &Report| {
            let mut c: Vec<String> = r.findings.iter().map(|f| f.class.clone()).collect();
            c.sort();
            c.dedup();
            c
        };
        assert_eq!(classes(&slice), classes(&stream));
    }
}

/// A stream's window big enough to be searched on several threads (a file
/// still being written, a pipe) gives the report of the scan in memory.
#[test]
fn a_big_streamed_window_searched_in_pieces_gives_the_same_report() {
    let mut log = Vec::new();
    while log.len() < 5 << 20 {
        log.extend_from_slice(LIGHTNING);
        log.extend_from_slice(DUP_GPU);
        log.extend_from_slice(OOM);
    }
    let scanner = ScannerBuilder::new()
        .block_size(4 << 20)
        .build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_reader("<memory>", std::io::Cursor::new(&log), &mut sink)
        .unwrap();
    let streamed = sink.into_report();
    let in_memory = report_slice(&log);
    assert_eq!(streamed, in_memory);
    assert!(
        streamed.findings.iter().any(|f| f.count > 10),
        "{:?}",
        streamed.findings
    );
}

#[test]
fn a_burst_of_warnings_is_confirmed_per_text_not_per_anchor() {
    // PyTorch 2.3's cuDNN v8 warning, printed by two ranks; the status and
    // the conv.py line vary, the anchors do not. Identical texts reuse what
    // matched before (the scan remembers it); a text that differs only in
    // its status must still be read for itself.
    let warning = |rank: u32, status: &str| {
        format!(
            "[rank{rank}]:/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: \
             UserWarning: Plan failed with a cudnnException: \
             CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed \
             cudnn_status: {status} (Triggered internally at \
             ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n\
             [rank{rank}]:  return F.conv2d(input, weight, bias, self.stride,\n"
        )
    };
    let mut log = String::new();
    for i in 0..3000u32 {
        let status = if i % 10 == 7 {
            "CUDNN_STATUS_EXECUTION_FAILED"
        } else {
            "CUDNN_STATUS_NOT_SUPPORTED"
        };
        log.push_str(&warning(i % 2, status));
        log.push_str(&format!("[rank{}]:step {i} loss 0.25\n", i % 2));
    }
    let report = report_slice(log.as_bytes());
    let count = |class: &str, status: &str| -> u64 {
        report
            .findings
            .iter()
            .filter(|f| f.class == class && f.message.contains(status))
            .map(|f| f.count)
            .sum()
    };
    assert_eq!(
        count("cudnn.plan_failed", "NOT_SUPPORTED"),
        2700,
        "{:#?}",
        gist(&report)
    );
    assert_eq!(count("cudnn.plan_failed", "EXECUTION_FAILED"), 300);
    // The status the rarer text carries is read for itself, as when the
    // warning is alone in its log.
    assert_eq!(count("cudnn.execution_failed", "EXECUTION_FAILED"), 300);
    let alone = report_slice(warning(0, "CUDNN_STATUS_EXECUTION_FAILED").as_bytes());
    let classes =
        |r: &Report| -> Vec<String> { r.findings.iter().map(|f| f.class.clone()).collect() };
    assert_eq!(
        classes(&alone),
        ["cudnn.plan_failed", "cudnn.execution_failed"]
    );
}

#[test]
fn a_headerless_traceback_longer_than_the_first_context_is_framed_from_its_start() {
    // A traceback pasted without its `Traceback (most recent call last):`
    // header starts at its first frame (unindented, as a paste cut there
    // is), which no anchor marks: the region
    // first framed around the exception line (8 KiB) cuts it, so it must be
    // widened until the event's first frame is inside it.
    let mut log = String::from("2026-11-29 19:41:04,724 INFO train: epoch 2 step 3\n");
    let first_frame = log.len();
    log.push_str("File \"/home/user/train/run.py\", line 88, in <module>\n    main()\n");
    for i in 0..300 {
        log.push_str(&format!(
            "  File \"/home/user/train/model.py\", line {i}, in forward\n    return self.block(x)\n"
        ));
    }
    log.push_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n");
    assert!(log.len() - first_frame > 20_000);
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut events = Vec::new();
    scanner
        .scan_slice(
            log.as_bytes(),
            &mut cudnnlog::sink::FnSink(|m: &cudnnlog::sink::Match<'_>| {
                events.push((m.class.to_string(), m.event_byte, m.text.len()));
                Ok::<bool, cudnnlog::Error>(true)
            }),
        )
        .unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].0.as_str(), events[0].1),
        ("cuda.oom", first_frame as u64)
    );
    assert!(events[0].2 > 20_000, "{events:?}");
}

/// A burst of thousands of warnings lists a sample of its occurrences; the
/// same sample whether the log is scanned whole, in parallel chunks or as a
/// stream of small blocks.
#[test]
fn a_bursts_sampled_occurrences_do_not_depend_on_how_the_scan_is_cut() {
    let burst = include_bytes!("../../../fixtures/synthetic/ddp-plan-failed-burst.log");
    let log: Vec<u8> = burst.repeat(100);
    let whole = report_slice(&log);
    let plan = whole
        .findings
        .iter()
        .find(|f| f.class == "cudnn.plan_failed")
        .unwrap();
    assert!(plan.count >= 500, "{}", plan.count);
    let n = plan.occurrences.len();
    assert!((16..=cudnnlog::report::MAX_OCCURRENCES).contains(&n), "{n}");
    assert!(plan.occurrences.windows(2).all(|w| w[0].byte < w[1].byte));
    // Spread over the log, with both ranks' lines.
    let (first, last) = (&plan.occurrences[0], &plan.occurrences[n - 1]);
    assert!(
        first.line < 960 && last.line > 96 * 90,
        "{} {}",
        first.line,
        last.line
    );
    assert!(plan.occurrences.iter().any(|p| p.rank == Some(0)));
    assert!(plan.occurrences.iter().any(|p| p.rank == Some(1)));
    for chunk in [4096, 1 << 20] {
        assert_eq!(report_in_chunks(&log, chunk), whole, "chunk {chunk}");
    }
    let mut streamed = report_stream(&log, 5000, 20000);
    let whole = report_slice_with(&log, 20000);
    streamed.sources[0].path = whole.sources[0].path.clone();
    assert_eq!(streamed, whole);
}

/// Four ranks print the same version banner thousands of times, and one
/// prints another version once in the middle: a repeated line is skipped
/// before it is read, and what is recorded is what reading every line
/// records, whatever the chunks.
#[test]
fn a_burst_of_version_banners_is_probed_as_every_line_would_be() {
    let banner = |rank: usize, version: &str| {
        format!("[rank{rank}]:2026-11-30 15:27:38,858 INFO train: torch {version}+cu121 cuda 12.1 cudnn 8902\n")
    };
    let mut log = String::new();
    for i in 0..20_000 {
        if i == 10_000 {
            log.push_str(&banner(2, "2.4.0"));
        }
        log.push_str(&banner(i % 4, "2.3.0"));
    }
    let whole = report_slice(log.as_bytes());
    assert_eq!(
        whole.environment["framework_version"],
        serde_json::json!(["2.3.0", "2.4.0"])
    );
    assert_eq!(whole.environment["cudnn"], "8.9.2");
    for chunk in [4096, 1 << 20] {
        assert_eq!(
            report_in_chunks(log.as_bytes(), chunk),
            whole,
            "chunk {chunk}"
        );
    }
}
