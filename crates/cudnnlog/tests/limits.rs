//! The limits that keep memory bounded on hostile input, and the promise
//! that they do not change the answer: the same report mapped, streamed
//! and in parallel chunks, however a long event falls on the stream's
//! blocks.

use cudnnlog::report::{FindingsSink, MAX_SIGNATURES, OTHER_SIGNATURES};
use cudnnlog::{Catalog, Report, Scanner, ScannerBuilder};

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.";

fn scanner(block: Option<usize>) -> Scanner {
    let mut b = ScannerBuilder::new();
    if let Some(block) = block {
        b.block_size(block);
    }
    b.build(Catalog::builtin().unwrap())
}

/// Mapped (one pass in memory), streamed, and in parallel chunks.
fn three_ways(s: &Scanner, log: &[u8]) -> [Report; 3] {
    let run = |how: u8| {
        let mut sink = FindingsSink::new(s.catalog());
        match how {
            0 => s.scan_slice(log, &mut sink).unwrap(),
            1 => s.scan_reader("", log, &mut sink).unwrap(),
            _ => s.scan_slice_parallel(log, &mut sink, &|_| {}).unwrap(),
        };
        let mut report = sink.into_report();
        report.sources[0].path = String::new();
        report
    };
    [run(0), run(1), run(2)]
}

/// A chain of `depth` exceptions, each raised while handling the one
/// before, the last one the OOM.
fn chain(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        s.push_str("Traceback (most recent call last):\n");
        s.push_str(&format!(
            "  File \"/home/user/train/train.py\", line {}, in step_{i}\n    loss = model(batch)\n",
            100 + i
        ));
        s.push_str(&format!("RuntimeError: step {i} failed\n\n"));
        s.push_str("During handling of the above exception, another exception occurred:\n\n");
    }
    s.push_str("Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 9, in <module>\n    main()\n");
    s.push_str(OOM);
    s.push('\n');
    s
}

fn padding(bytes: usize) -> String {
    let mut s = String::new();
    let mut step = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "2026-11-29 19:40:51,487 INFO train: step {step} loss 0.{step:04} lr 3e-4\n"
        ));
        step += 1;
    }
    s
}

/// A 1000-deep chain straddling a stream block: the streamed scan used to
/// frame it from the block's start and lose the OOM at its end.
#[test]
fn a_deep_chain_across_a_block_boundary_gives_the_same_report() {
    let c = chain(1000);
    for block in [1 << 20, 8 << 20] {
        let s = scanner(Some(block));
        for before in [block - c.len() / 2, block - c.len() / 3, block - 4096] {
            let log = format!("{}{c}{}", padding(before), padding(64 << 10));
            let [mapped, streamed, parallel] = three_ways(&s, log.as_bytes());
            assert_eq!(mapped.primary.as_deref(), Some("cuda.oom"));
            assert_eq!(streamed, mapped, "block {block}, chain at {before}");
            assert_eq!(parallel, mapped, "block {block}, chain at {before}");
        }
    }
}

/// A chain far longer than a region may span (30,000 exceptions, 4.6 MB)
/// is framed as several regions, cut where they split: the OOM that ends
/// it is still the primary, the same three ways. (It was lost when a split
/// region widened back into the one before.)
#[test]
fn a_chain_longer_than_a_region_keeps_its_last_exception() {
    let c = chain(30_000);
    assert!(c.len() > 4 << 20);
    // Streams agree when a block holds a region whole (a region spans at
    // most 2 MiB): the default 8 MiB blocks, and larger ones.
    for block in [8 << 20, 16 << 20] {
        let s = scanner(Some(block));
        let log = format!("{}{c}{}", padding(100 << 10), padding(100 << 10));
        let [mapped, streamed, parallel] = three_ways(&s, log.as_bytes());
        let brief: Vec<_> = mapped
            .findings
            .iter()
            .map(|f| (&f.class, f.first.line, f.count))
            .collect();
        assert_eq!(
            mapped.primary.as_deref(),
            Some("cuda.oom"),
            "block {block}: {brief:?}"
        );
        assert_eq!(streamed, mapped, "block {block}");
        assert_eq!(parallel, mapped, "block {block}");
    }
}

/// Errors packed for longer than a region may span are framed as several
/// regions; the three ways still agree.
#[test]
fn an_error_flood_longer_than_a_region_gives_the_same_report() {
    let s = scanner(None);
    let mut log = padding(300 << 10);
    for i in 0..120_000 {
        log.push_str(&format!(
            "RuntimeError: CUDA error: an illegal memory access was encountered (step {i})\n"
        ));
    }
    log.push_str(&padding(1 << 20));
    let [mapped, streamed, parallel] = three_ways(&s, log.as_bytes());
    assert_eq!(mapped.findings[0].class, "cuda.illegal_address");
    assert_eq!(mapped.findings[0].count, 120_000);
    assert_eq!(streamed, mapped);
    assert_eq!(parallel, mapped);
}

/// A line of 16 MiB with a status at its end: the event's text keeps the
/// line's head and tail, the finding says it was cut.
#[test]
fn a_giant_line_is_cut_to_its_ends_and_the_finding_marked() {
    let mut log = vec![b'x'; 16 << 20];
    log.extend_from_slice(b" cudnn error: CUDNN_STATUS_EXECUTION_FAILED\n");
    log.extend_from_slice(OOM.as_bytes());
    log.push(b'\n');
    let s = scanner(None);
    let [mapped, _, parallel] = three_ways(&s, &log);
    let cut = mapped
        .findings
        .iter()
        .find(|f| f.class == "cudnn.execution_failed")
        .expect("the status at the end of the line is found");
    assert!(cut.truncated && cut.message.len() <= 2000, "{cut:?}");
    let oom = mapped
        .findings
        .iter()
        .find(|f| f.class == "cuda.oom")
        .unwrap();
    assert!(!oom.truncated);
    assert_eq!(oom.first.line, 2);
    assert_eq!(parallel, mapped);
    let json = serde_json::to_value(&mapped).unwrap();
    assert!(json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["truncated"] == true));
}

/// Thousands of distinct signatures of one class (an op name each) are
/// bounded: the first MAX_SIGNATURES are findings of their own, the rest
/// are counted in one more, marked truncated.
#[test]
fn distinct_signatures_beyond_the_limit_are_folded_into_one() {
    let n = MAX_SIGNATURES + 300;
    let mut log = String::new();
    for i in 0..n {
        log.push_str(&format!(
            "RuntimeError: Function 'Op{i:08}Backward0' returned nan values in its 0th output.\n"
        ));
    }
    let s = scanner(None);
    let [mapped, streamed, _] = three_ways(&s, log.as_bytes());
    let nan: Vec<_> = mapped
        .findings
        .iter()
        .filter(|f| f.class == "train.nan_loss")
        .collect();
    assert_eq!(
        nan.len(),
        MAX_SIGNATURES + 1,
        "one per kept signature, one for the rest"
    );
    let rest: Vec<_> = nan.iter().filter(|f| f.truncated).collect();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].count, 300);
    assert_eq!(rest[0].first.line as usize, MAX_SIGNATURES + 1);
    assert_eq!(nan.iter().map(|f| f.count).sum::<u64>(), n as u64);
    assert_eq!(streamed, mapped);
    assert!(!OTHER_SIGNATURES.is_empty());
}
