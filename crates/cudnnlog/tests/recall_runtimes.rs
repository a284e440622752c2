//! Recall on runtime wordings found on fresh logs: Python's faulthandler on
//! Windows and crash statuses given in wait()'s encoding. Each log is
//! written from the emitting program's template (the patterns' `sources`),
//! with training output around it.

mod common;

use common::{finding, report};
use cudnnlog::catalog::Severity;
use cudnnlog::Report;

fn fact(r: &Report, class: &str, name: &str) -> String {
    let f = finding(r, class);
    f.facts
        .get(name)
        .map(ToString::to_string)
        .unwrap_or_else(|| panic!("no {name} in {:?}", f.facts))
}

fn has(r: &Report, class: &str) -> bool {
    r.findings.iter().any(|f| f.class == class)
}

// ---------------------------------------------------------------- faulthandler on Windows

#[test]
fn windows_faulthandler_access_violation_is_a_crash() {
    let r = report(
        b"Epoch 1/20:  43%|####3     | 520/1200 [02:11<02:52,  3.95it/s, loss=0.812]\n\
          Windows fatal exception: access violation\n\
          \n\
          Current thread 0x00003b2c (most recent call first):\n  \
          File \"C:\\Users\\me\\miniconda3\\envs\\dl\\lib\\site-packages\\torch\\nn\\modules\\conv.py\", line 456 in _conv_forward\n  \
          File \"C:\\Users\\me\\proj\\train.py\", line 88 in train_step\n\
          \n\
          Process finished with exit code -1073741819 (0xC0000005)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-python-windows-fatal");
    assert_eq!(
        fact(&r, "proc.segfault", "exception_name"),
        "access violation"
    );
}

#[test]
fn windows_faulthandler_names_other_codes_in_hex() {
    let r = report(
        b"[W 12:03:11] dataloader: 4 workers\n\
          Windows fatal exception: code 0xc0000409\n\
          \n\
          Thread 0x00002a10 (most recent call first):\n  \
          File \"C:\\Python311\\Lib\\site-packages\\numpy\\linalg\\linalg.py\", line 561 in inv\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    assert_eq!(fact(&r, "proc.segfault", "ntstatus"), "0xc0000409");
    assert_eq!(finding(&r, "proc.segfault").severity, Severity::Error);
}

#[test]
fn a_handled_com_exception_in_a_passing_test_run_is_not_a_crash() {
    let r = report(
        b"tests\\test_presentation_mode.py ..........                   [100%]\n\
          10 passed in 3.11s\n\
          Windows fatal exception: code 0x8001010d\n\
          \n\
          Current thread 0x00001470 (most recent call first):\n  \
          File \"C:\\proj\\tests\\test_presentation_mode.py\", line 97 in _press\n",
    );
    assert!(!has(&r, "proc.segfault"), "{:?}", r.findings);
}

// ---------------------------------------------------------------- wait statuses

#[test]
fn os_system_wait_status_of_a_segfault_is_a_crash() {
    let r = report(
        // the child's stderr went elsewhere: the script's own line is all there is
        b"[2026-12-06 09:12:44] launching: python tools/train_net.py --config-file configs/mask_rcnn.yaml\n\
          [2026-12-06 09:13:02] ERROR run_all.py: training failed with exit code 35584\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-wait-status");
    assert_eq!(fact(&r, "proc.segfault", "sigsegv"), "35584");
}

#[test]
fn a_wait_status_of_an_abort_gets_its_signal_stated() {
    let r = report(b"step 900 loss 1.2040\nos.system returned 34304\n");
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-wait-status");
    assert!(
        f.remediations
            .iter()
            .any(|s| s.contains("34304") && s.contains("SIGABRT")),
        "{:?}",
        f.remediations
    );
}

#[test]
fn wait_status_256_is_exit_status_1_not_a_crash() {
    for line in [
        "RuntimeError: Command failed with exit code 256: python tools/train_net.py",
        "subprocess.CalledProcessError: Command 'bash run.sh' returned non-zero exit status 256.",
        "training script exited with code 256",
        "Process finished with exit code 1",
    ] {
        let r = report(format!("epoch 1 loss 2.31\n{line}\n").as_bytes());
        assert!(!has(&r, "proc.segfault"), "{line}: {:?}", r.findings);
        assert!(!has(&r, "host.oom_killed"), "{line}: {:?}", r.findings);
    }
}
