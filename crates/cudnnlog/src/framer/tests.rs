use super::*;

/// Frames `log` and returns each event's kind, origin and line texts.
fn frame(log: &str) -> Vec<(EventKind, Option<Origin>, Vec<String>)> {
    let hay = log.as_bytes();
    let mut out = Vec::new();
    let mut f = Framer::new();
    f.frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
        let lines: Vec<String> = ev
            .lines
            .iter()
            .map(|l| String::from_utf8_lossy(&hay[l.start..l.end]).into_owned())
            .collect();
        out.push((ev.start(), (ev.kind, ev.origin, lines)));
    });
    out.sort_by_key(|e| e.0);
    out.into_iter().map(|e| e.1).collect()
}

fn kinds(log: &str) -> Vec<(EventKind, usize)> {
    frame(log)
        .into_iter()
        .map(|(k, _, l)| (k, l.len()))
        .collect()
}

#[test]
fn physical_lines_split_on_cr_and_crlf() {
    let hay = b"a\r\nb\rc\nd";
    let l: Vec<_> = lines(hay, 0..hay.len()).map(|(s, e)| &hay[s..e]).collect();
    assert_eq!(l, [&b"a"[..], b"b", b"c", b"d"]);
}

/// The final exception line of each traceback event.
fn final_exceptions(log: &str) -> Vec<String> {
    let hay = log.as_bytes();
    let mut out = Vec::new();
    Framer::new().frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
        if let Some(i) = ev.exception {
            let l = ev.lines[i];
            out.push(String::from_utf8_lossy(&hay[l.start..l.end]).into_owned());
        }
    });
    out
}

#[test]
fn the_final_exception_of_a_chain_or_a_worker_is_recorded() {
    let chained = "\
Traceback (most recent call last):
  File \"a.py\", line 1, in <module>
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"a.py\", line 3, in <module>
ValueError: bad preset
known presets: a, b
";
    assert_eq!(final_exceptions(chained), ["ValueError: bad preset"]);
    let worker = "\
Traceback (most recent call last):
  File \"train.py\", line 88, in <module>
    for batch in loader:
FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 3.
Original Traceback (most recent call last):
  File \"worker.py\", line 358, in _worker_loop
    data = fetcher.fetch(index)
FileNotFoundError: [Errno 2] No such file or directory: 'data/0001.jpg'
";
    assert_eq!(
        final_exceptions(worker),
        ["FileNotFoundError: [Errno 2] No such file or directory: 'data/0001.jpg'"]
    );
}

#[test]
fn an_event_buried_by_other_writers_is_closed() {
    // An unprefixed traceback, 100 lines of rank-tagged step lines, then
    // an unprefixed line: not the traceback's continuation.
    let mut log = String::from("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nValueError: bad\n");
    for i in 0..100 {
        log.push_str(&format!(
            "[rank1]:2026-11-29 19:40:51,487 INFO train: step {i}\n"
        ));
    }
    log.push_str("Epoch 3:  45%|####      | 450/1000\n");
    let events = frame(&log);
    let tb = events.iter().find(|e| e.0 == EventKind::Traceback).unwrap();
    assert_eq!(tb.2.len(), 3, "{:?}", tb.2);
}

#[test]
fn a_nul_before_a_traceback_does_not_hide_it() {
    let log = "ERROR: Unexpected segmentation fault encountered in worker.\n\0Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nRuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault.\n";
    assert_eq!(
        final_exceptions(log),
        ["RuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault."]
    );
}

#[test]
fn hard_wrapped_lines_are_joined_without_a_newline() {
    // Wrapped at 80: no line is longer, two are exactly 80.
    let first = format!("2026-11-29 19:41:04,724 ERROR train: {}", "a".repeat(43));
    let second = format!("{}b", "c".repeat(79));
    assert_eq!((first.len(), second.len()), (80, 80));
    let log =
        format!("{first}\n{second}\ntail of the message\n2026-11-29 19:41:05,000 INFO next\n");
    let hay = log.as_bytes();
    let mut texts = Vec::new();
    let (mut text, mut at, mut scratch) = (String::new(), Vec::new(), Vec::new());
    Framer::new().frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
        ev.text_into(hay, &mut text, &mut at, &mut scratch);
        texts.push(text.clone());
    });
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts
        .iter()
        .any(|t| *t == format!("train: {}{second}tail of the message", "a".repeat(43))));
}

#[test]
fn traceback_through_exception_and_its_continuation() {
    let log = "\
2026-11-29 19:42:15,020 INFO train: step 6 loss 2.3553
Traceback (most recent call last):
  File \"/home/user/train/s06_device_assert.py\", line 15, in <module>
    log.info(\"step %d loss %.4f\", step, loss.item())
                                        ^^^^^^^^^^^
torch.AcceleratorError: CUDA error: device-side assert triggered
Search for `cudaErrorAssert' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1

2026-11-29 19:42:16,000 INFO train: next
";
    assert_eq!(
        kinds(log),
        [
            (EventKind::Line, 1),
            (EventKind::Traceback, 7),
            (EventKind::Line, 1)
        ]
    );
}

#[test]
fn chained_tracebacks_stay_together() {
    let log = "\
Traceback (most recent call last):
  File \"a.py\", line 1, in <module>
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"a.py\", line 3, in <module>
RuntimeError: CUDA error: an illegal memory access was encountered
next line of output
";
    let ev = frame(log);
    assert_eq!(ev[0].0, EventKind::Traceback);
    assert_eq!(ev[0].2.len(), 10, "{:?}", ev[0].2);
    assert!(ev[0].2[8].starts_with("RuntimeError"));
}

#[test]
fn blank_line_without_chain_ends_the_traceback() {
    let log = "Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x\n\nEpoch 3 starting\n";
    assert_eq!(
        kinds(log),
        [(EventKind::Traceback, 3), (EventKind::Line, 1)]
    );
}

#[test]
fn xla_message_paragraphs_stay_in_the_traceback() {
    let log = "\
Traceback (most recent call last):
  File \"/home/user/train/train_jax.py\", line 102, in <module>
jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to determine best cudnn convolution algorithm for:
%cudnn-conv = (f32[64,128,56,56]{3,2,1,0}, u8[0]{0}) custom-call(...)

Original error: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4294967296 bytes.

To ignore this failure and try to use a fallback algorithm, use XLA_FLAGS=--xla_gpu_strict_conv_algorithm_picker=false.

Epoch 2 starting
";
    assert_eq!(
        kinds(log),
        [(EventKind::Traceback, 8), (EventKind::Line, 1)]
    );
}

#[test]
fn interleaved_ranks_give_separate_events() {
    let log = "\
[rank1]: Traceback (most recent call last):
[rank0]: Traceback (most recent call last):
[rank1]:   File \"/home/user/train/s09.py\", line 11, in <module>
[rank0]:   File \"/home/user/train/s09.py\", line 11, in <module>
[rank1]: torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, invalid usage
[rank0]: torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, invalid usage
[rank1]: Last error:
[rank0]: Last error:
";
    let ev = frame(log);
    assert_eq!(ev.len(), 2);
    for (kind, origin, lines) in &ev {
        assert_eq!(*kind, EventKind::Traceback);
        assert_eq!(lines.len(), 4);
        let tag = match origin {
            Some(Origin::Rank(r)) => format!("[rank{r}]"),
            other => panic!("{other:?}"),
        };
        assert!(lines.iter().all(|l| l.starts_with(&tag)), "{lines:?}");
    }
}

#[test]
fn cxx_exception_block_joins_its_message_line() {
    let log = "\
[rank0]:[E1129 19:47:59.751215521 ProcessGroupNCCL.cpp:2119] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: timeout
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:692 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x9d (0x7f6048d7305d in libc10.so)
frame #1: <unknown function> + 0x9cb84 (0x7f6049e9cb84 in /lib/x86_64-linux-gnu/libc.so.6)

terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:692 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x9d (0x7f6048d7305d in libc10.so)
";
    let ev = frame(log);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert_eq!(
        (ev[0].0, ev[0].1, ev[0].2.len()),
        (EventKind::CxxException, Some(Origin::Rank(0)), 4)
    );
    assert_eq!((ev[1].0, ev[1].2.len()), (EventKind::CxxException, 4));
}

#[test]
fn warning_with_its_source_line() {
    let log = "\
/usr/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)
  return F.conv2d(input, weight, bias, self.stride,
2026-11-29 19:41:01,366 INFO train: epoch 0 step 0
<frozen runpy>:128: RuntimeWarning: 'torch.utils.collect_env' found in sys.modules
";
    assert_eq!(
        kinds(log),
        [
            (EventKind::Warning, 2),
            (EventKind::Line, 1),
            (EventKind::Warning, 1)
        ]
    );
}

#[test]
fn torchrun_summary_block_is_one_event() {
    let log = "\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
s09_nccl_duplicate.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_19:42:51
  rank      : 1 (local_rank: 1)
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  exitcode  : 1 (pid: 833)
============================================================
after
";
    // The launcher's exception line opens an exception event that holds
    // its summary block.
    let ev = frame(log);
    assert_eq!((ev[0].0, ev[0].2.len()), (EventKind::Exception, 13));
    assert_eq!(ev[1].2, ["after"]);
    // On its own, the block is a summary event.
    let ev = frame(&log[log.find('\n').unwrap() + 1..]);
    assert_eq!(ev[0].0, EventKind::Summary);
    assert_eq!(ev[0].2.len(), 12);
    // Inside a traceback, the block continues the exception message.
    let tb = format!("Traceback (most recent call last):\n  File \"x\", line 1\n{log}");
    let ev = frame(&tb);
    assert_eq!((ev[0].0, ev[0].2.len()), (EventKind::Traceback, 15));
}

#[test]
fn progress_bar_redraws_are_lines() {
    let log = "Epoch 0:  10%|#   | 1/10\rEpoch 0:  20%|##  | 2/10\rEpoch 0: 100%|####| 10/10\n";
    assert_eq!(kinds(log).len(), 3);
}

#[test]
fn ansi_codes_do_not_hide_structure() {
    let log = "\x1b[31mTraceback (most recent call last):\x1b[0m\n  File \"a.py\", line 1\n\x1b[1mValueError\x1b[0m: x\n";
    let hay = log.as_bytes();
    let mut f = Framer::new();
    let mut texts = Vec::new();
    f.frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
        let (mut t, mut at, mut s) = (String::new(), Vec::new(), Vec::new());
        ev.text_into(hay, &mut t, &mut at, &mut s);
        texts.push(t);
    });
    assert_eq!(
        texts,
        ["Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x"]
    );
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x9e3779b97f4a7c15u64;
    let alphabet: &[&[u8]] = &[
        b"\n",
        b"\r",
        b" ",
        b"Traceback (most recent call last):",
        b"[rank1]:",
        b"=========================",
        b"frame #0: x",
        b"Exception raised from x",
        b"\x1b[",
        b"\xff\xfe",
        b"\0",
        b"x.py:1: UserWarning: y",
        b"FAILED",
        b"  what():",
    ];
    for _ in 0..2000 {
        let mut hay = Vec::new();
        for _ in 0..(seed % 40) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            hay.extend_from_slice(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        let mut f = Framer::new();
        let mut covered = 0;
        f.frame(&hay, 0..hay.len(), &mut |ev: &Event<'_>| {
            assert!(!ev.lines.is_empty());
            assert!(ev.lines.windows(2).all(|w| w[0].start < w[1].start));
            covered += ev.lines.len();
        });
        assert!(covered <= hay.len() + 1);
    }
}

/// The texts of the events of `log`, in order.
fn texts(log: &str) -> Vec<String> {
    let hay = log.as_bytes();
    let mut out = Vec::new();
    let (mut t, mut at, mut s) = (String::new(), Vec::new(), Vec::new());
    Framer::new().frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
        ev.text_into(hay, &mut t, &mut at, &mut s);
        out.push((ev.start(), t.clone()));
    });
    out.sort();
    out.into_iter().map(|e| e.1).collect()
}

#[test]
fn continuations_are_joined_into_their_line() {
    // Reflowed under a level prefix: joined with a blank.
    let banner = "ERROR: This container was built for NVIDIA Driver Release 530.30 or later, but\n       version 470.82.01 was detected and compatibility mode is UNAVAILABLE.\n\nNOTE: next\n";
    assert_eq!(
        texts(banner)[0],
        "This container was built for NVIDIA Driver Release 530.30 or later, but version 470.82.01 was detected and compatibility mode is UNAVAILABLE."
    );
    // Kernel messages that repeat their tag.
    let nvrm = "[ 12.5] NVRM: API mismatch: the client has the version 535.54.03, but\n[ 12.5] NVRM: this kernel module has the version 530.30.02.  Please\n[ 12.6] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n";
    let t = texts(nvrm);
    assert_eq!(t.len(), 2, "{t:?}");
    assert_eq!(
        t[0],
        "NVRM: API mismatch: the client has the version 535.54.03, but this kernel module has the version 530.30.02.  Please"
    );
    // Soft wraps: after a blank, a continuation in lower case.
    let soft = "RuntimeError: x does not have a deterministic implementation, but you set \n'torch.use_deterministic_algorithms(True)'.\n";
    assert_eq!(
        texts(soft),
        ["RuntimeError: x does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'."]
    );
}

#[test]
fn exception_events_without_a_traceback() {
    // A bare exception with its message lines; a second one is its own event.
    let log = "ValueError: bad shape\nexpected (3, 224, 224)\nKeyError: 'x'\n";
    assert_eq!(
        kinds(log),
        [(EventKind::Exception, 2), (EventKind::Exception, 1)]
    );
    // A traceback cut before its header starts at its first frame.
    let cut = "File \"a.py\", line 3, in f\n    g()\nNameError: name 'g' is not defined\n";
    assert_eq!(kinds(cut), [(EventKind::Traceback, 3)]);
    assert_eq!(
        final_exceptions(cut),
        ["NameError: name 'g' is not defined"]
    );
    // An IPython traceback keeps its blank lines and `---->` markers.
    let ipy = "ValueError                                Traceback (most recent call last)\nCell In[2], line 1\n----> 1 f()\n\nFile ~/a.py:3, in f()\n----> 3 raise ValueError(\"no\")\n\nValueError: no\n";
    assert_eq!(kinds(ipy), [(EventKind::Traceback, 8)]);
    assert_eq!(final_exceptions(ipy), ["ValueError: no"]);
}
