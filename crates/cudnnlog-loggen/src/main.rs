//! `loggen`: writes a large, realistic training log with a known answer.
//!
//! ```text
//! loggen --size 1G --seed 7 --out /tmp/train-1g.log
//! ```
//!
//! The log interleaves what multi-rank training jobs print — timestamped
//! step lines with torchrun rank tags, `\r` progress-bar redraws, NCCL INFO
//! chatter, environment headers of restarted runs, invalid UTF-8, very long
//! lines — with failures copied from real captures in `fixtures/`: PyTorch
//! out-of-memory tracebacks, device-side asserts, NCCL watchdog timeouts,
//! cuDNN execution failures, a `KeyError`, and bursts of thousands of
//! "Plan failed with a cudnnException" warnings. Next to the log,
//! `<out>.truth.json` says how many matches of each class were planted, so a
//! benchmark checks the answer, not just the time. The same seed and size
//! give the same bytes.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::io::Write;

/// A failure copied from a real capture, and the matches cudnnlog counts for
/// it (class, count).
struct Incident {
    text: &'static str,
    classes: &'static [(&'static str, u64)],
    /// Relative frequency.
    weight: u32,
}

fn lines_of(text: &'static str, from: usize, to: usize) -> &'static str {
    // Byte range of lines [from, to] (1-based, inclusive).
    let mut starts = vec![0usize];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let a = starts[from - 1];
    let b = starts.get(to).copied().unwrap_or(text.len());
    &text[a..b]
}

fn incidents() -> Vec<Incident> {
    const OOM: &str = include_str!("../../../fixtures/real/h200-torch-oom-amp-train.log");
    const ASSERT: &str = include_str!("../../../fixtures/real/h200-torch-device-assert.log");
    const EXEC: &str = include_str!("../../../fixtures/synthetic/pytorch-execution-failed.log");
    const KEYERR: &str = include_str!("../../../fixtures/gpu/h200-p07_exception.log");
    const WATCHDOG: &str =
        include_str!("../../../fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log");
    vec![
        Incident {
            text: lines_of(OOM, 18, 29),
            classes: &[("cuda.oom", 1)],
            weight: 4,
        },
        Incident {
            text: lines_of(ASSERT, 11, 20),
            classes: &[("cuda.device_assert", 2)],
            weight: 2,
        },
        Incident {
            text: lines_of(EXEC, 4, 13),
            classes: &[("cudnn.execution_failed", 1)],
            weight: 2,
        },
        Incident {
            text: lines_of(KEYERR, 2, 6),
            classes: &[("python.exception", 1)],
            weight: 1,
        },
        Incident {
            text: lines_of(WATCHDOG, 14, 14),
            classes: &[("nccl.timeout", 1)],
            weight: 3,
        },
    ]
}

const PLAN_FAILED: &str = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,\n";

/// xorshift64*: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Gen<W: Write> {
    out: W,
    rng: Rng,
    bytes: u64,
    lines: u64,
    step: u64,
    epoch: u64,
    /// Seconds since the start of the run.
    clock: u64,
    truth: BTreeMap<String, u64>,
    ranks: u64,
}

impl<W: Write> Gen<W> {
    fn write(&mut self, s: &[u8]) -> Result<()> {
        self.out.write_all(s)?;
        self.bytes += s.len() as u64;
        self.lines += bytecount(s);
        Ok(())
    }

    fn stamp(&self) -> String {
        let t = self.clock;
        let (d, h, m, s) = (29 + t / 86_400 % 2, t / 3600 % 24, t / 60 % 60, t % 60);
        format!(
            "2026-11-{d:02} {h:02}:{m:02}:{s:02},{:03}",
            self.step % 1000
        )
    }

    fn step_line(&mut self) -> Result<()> {
        self.step += 1;
        self.clock += 1;
        if self.step.is_multiple_of(5000) {
            self.epoch += 1;
        }
        let rank = self.rng.below(self.ranks);
        let loss = 2.5 / (1.0 + self.step as f64 / 20_000.0);
        let line = format!(
            "[rank{rank}]:{} INFO train: epoch {} step {} batch 128 loss {loss:.4} lr 3.0e-04 grad_norm {:.2} tokens/s {}\n",
            self.stamp(),
            self.epoch,
            self.step,
            1.0 + (self.rng.below(300) as f64) / 100.0,
            90_000 + self.rng.below(20_000)
        );
        self.write(line.as_bytes())
    }

    fn progress_bar(&mut self) -> Result<()> {
        let total = 1000;
        let mut s = String::new();
        for i in (0..=total).step_by(50) {
            let filled = i * 20 / total;
            s.push_str(&format!(
                "\rEpoch {}: {:3}%|{}{}| {i}/{total} [01:23<01:42,  5.37it/s, loss=0.{}]",
                self.epoch,
                i * 100 / total,
                "#".repeat(filled as usize),
                " ".repeat(20 - filled as usize),
                self.rng.below(900) + 100
            ));
        }
        s.push('\n');
        self.write(s.as_bytes())
    }

    fn nccl_chatter(&mut self) -> Result<()> {
        let pid = 2200 + self.rng.below(self.ranks);
        let line = format!(
            "node-7:{pid}:{} [{}] NCCL INFO Channel {:02}/02 :    0   1   2   3   4   5   6   7\n",
            pid + 90,
            pid - 2200,
            self.rng.below(2)
        );
        self.write(line.as_bytes())
    }

    fn restart_header(&mut self) -> Result<()> {
        let header = format!(
            "{ts} INFO train: torch 2.11.0+cu130 cuda 13.0 cudnn 91900\n{ts} INFO train: gpu NVIDIA H200 capability 9.0 memory 139.8 GiB\n{ts} INFO train: cudnn.benchmark=True deterministic=False\nNCCL version 2.28.9+cuda13.0\n",
            ts = self.stamp()
        );
        self.write(header.as_bytes())
    }

    fn garbage(&mut self) -> Result<()> {
        let mut line =
            format!("{} WARNING data: skipped a corrupt record ", self.stamp()).into_bytes();
        line.extend_from_slice(&[0xff, 0xfe, 0x80, b'x', 0xc3, 0x28, b'\n']);
        self.write(&line)
    }

    fn long_line(&mut self) -> Result<()> {
        let mut line = format!("{} INFO metrics: {{\"histogram\": [", self.stamp());
        for i in 0..30_000 {
            line.push_str(&format!("{}, ", (i * 7919) % 1000));
        }
        line.push_str("0]}\n");
        self.write(line.as_bytes())
    }

    fn incident(&mut self, all: &[Incident]) -> Result<()> {
        let total: u32 = all.iter().map(|i| i.weight).sum();
        let mut pick = self.rng.below(total as u64) as u32;
        let inc = all
            .iter()
            .find(|i| {
                if pick < i.weight {
                    true
                } else {
                    pick -= i.weight;
                    false
                }
            })
            .expect("weights add up");
        self.write(inc.text.as_bytes())?;
        // A failed worker is restarted: the launcher's own record closes the
        // failure's traceback, as in real logs (nothing else of that process
        // follows its uncaught exception).
        let restart = format!(
            "{} INFO launcher: worker group restarted after a failure\n",
            self.stamp()
        );
        self.write(restart.as_bytes())?;
        for (class, n) in inc.classes {
            *self.truth.entry(class.to_string()).or_default() += n;
        }
        Ok(())
    }

    fn plan_failed_burst(&mut self) -> Result<()> {
        let n = 1000 + self.rng.below(4000);
        for i in 0..n {
            let rank = i % self.ranks;
            for line in PLAN_FAILED.lines() {
                self.write(format!("[rank{rank}]:{line}\n").as_bytes())?;
            }
            if i % 7 == 0 {
                self.step_line()?;
            }
        }
        *self.truth.entry("cudnn.plan_failed".into()).or_default() += n;
        Ok(())
    }
}

fn bytecount(s: &[u8]) -> u64 {
    s.iter().filter(|&&c| c == b'\n').count() as u64
}

fn parse_size(s: &str) -> Result<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => {
            let unit = s[i..].to_ascii_uppercase();
            let mult: u64 = match unit.trim_end_matches("IB").trim_end_matches('B') {
                "" => 1,
                "K" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                _ => bail!("unknown size unit in {s:?}"),
            };
            (&s[..i], mult)
        }
        None => (s, 1),
    };
    let n: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("bad size {s:?}"))?;
    Ok((n * mult as f64) as u64)
}

fn main() -> Result<()> {
    let mut size = 1u64 << 30;
    let mut seed = 7u64;
    let mut out_path: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--size" => size = parse_size(&args.next().context("--size needs a value")?)?,
            "--seed" => seed = args.next().context("--seed needs a value")?.parse()?,
            "--out" => out_path = Some(args.next().context("--out needs a path")?),
            "-h" | "--help" => {
                let mut o = std::io::stdout();
                writeln!(o, "usage: loggen [--size 1G] [--seed 7] --out FILE")?;
                writeln!(
                    o,
                    "writes FILE and FILE.truth.json (planted matches per class)"
                )?;
                return Ok(());
            }
            other => bail!("unknown argument {other:?}"),
        }
    }
    let path = out_path.context("--out FILE is required")?;
    let file = std::fs::File::create(&path).with_context(|| format!("cannot create {path}"))?;
    let mut g = Gen {
        out: std::io::BufWriter::with_capacity(1 << 20, file),
        rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        bytes: 0,
        lines: 0,
        step: 0,
        epoch: 0,
        clock: 0,
        truth: BTreeMap::new(),
        ranks: 8,
    };
    let all = incidents();
    g.restart_header()?;
    while g.bytes < size {
        // Per step line, on average: chatter, progress bars, garbage and
        // long lines now and then; a failure every ~2 MB; a burst of plan
        // warnings every ~200 MB; a restart header every ~100 MB.
        g.step_line()?;
        let r = g.rng.below(1_000_000);
        match r {
            0..=60_000 => g.nccl_chatter()?,
            60_001..=62_000 => g.progress_bar()?,
            62_001..=62_100 => g.garbage()?,
            62_101..=62_105 => g.long_line()?,
            62_106..=62_175 => g.incident(&all)?,
            62_176..=62_176 => g.plan_failed_burst()?,
            62_177..=62_180 => g.restart_header()?,
            _ => {}
        }
    }
    g.out.flush()?;
    let truth = serde_json::json!({
        "seed": seed,
        "bytes": g.bytes,
        "lines": g.lines,
        "classes": g.truth,
    });
    std::fs::write(
        format!("{path}.truth.json"),
        serde_json::to_vec_pretty(&truth)?,
    )?;
    Ok(())
}
