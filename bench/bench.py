#!/usr/bin/env python3
"""Times cudnnlog against the searches a user would run instead, in one run.

    python3 bench/bench.py                      # sizes 0.5, 1, 2 and 8 GB, 5 runs each
    python3 bench/bench.py --sizes 1 --runs 3   # a quicker look
    python3 bench/bench.py --smoke              # CI: debug build, 20 MB, answers only
    python3 bench/bench.py --features hyperscan # with the system's Hyperscan
    python3 bench/bench.py --bin DIR --rg RG --cpus 2,16 --sizes 1,4 --skip anchors,burst
                                                # prebuilt binaries, pinned to 2 and 16 cores

First start-up: a 6-byte log scanned many times by each tool, interleaved.
Then for each size it generates a log with `loggen` (seeded; reused when
present) and its ground truth, warms the file into the page cache, and runs
in turn, several times: `cudnnlog scan --format json` on the file as a
finished log (mapped), the same on the file just touched (modified seconds
ago, so streamed: a log scanned right after the job died), `rg -c -F` with
the 35 triage keywords of `bench/triage-keywords.txt` (what users grep for),
`rg -c -F` with the catalog's full anchor list (`cudnnlog patterns list
--format anchors`), and `wc -l` (counting newlines: the floor for reading the
file at all). Interleaving keeps the tools under the same machine noise. It
prints medians, ratios and peak *anonymous* memory for cudnnlog (RssAnon:
heap and stacks, not the mapped file's pages, sampled in runs of their own
so that the sampler does not slow the timed ones), and checks both cudnnlog
reports against the ground truth.

With `--cpus 2,16` every tool runs pinned by `taskset -c` to the first 2,
then the first 16 cores (cudnnlog's threads follow the pinning), and a
scaling line per size gives cudnnlog's GiB/s at each and how far from
linear the step between them is. `--bin DIR` takes `cudnnlog` and `loggen`
from DIR (a machine without a toolchain: copy the release binaries and an
`rg` there, and pass `--rg`).
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")
RG = "rg"


def build(release=True, features=""):
    profile = ["--release"] if release else []
    extra = ["--features", f"cudnnlog-cli/{features}"] if features else []
    subprocess.run(
        ["cargo", "build", *profile, *extra, "-p", "cudnnlog-cli", "-p", "cudnnlog-loggen"],
        cwd=ROOT,
        check=True,
    )


def generate(path, size_gb, seed):
    if os.path.exists(path) and os.path.exists(path + ".truth.json"):
        return
    t = time.perf_counter()
    subprocess.run(
        [os.path.join(BIN, "loggen"), "--size", f"{size_gb}G", "--seed", str(seed), "--out", path],
        check=True,
    )
    print(f"generated {path} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    # cudnnlog reads (rather than maps) a file modified in the last 30 s, as a
    # log that may still be written; a finished benchmark log is not one.
    past = time.time() - 3600
    os.utime(path, (past, past))


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or "unknown"."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


PIN = []  # `taskset -c 0-N` while a --cpus count is timed


def timed(cmd, out, watch=False):
    """Runs cmd; returns (wall seconds, peak RssAnon KiB, peak VmHWM KiB, exit code).

    Only a watched run samples its memory (every 2 ms, from /proc): the
    sampler takes CPU time that a tool using every core would otherwise
    have, and rounds the wall time up to its period, so runs that are timed
    are not watched, and memory comes from runs of their own.
    """
    start = time.perf_counter()
    p = subprocess.Popen(PIN + cmd, stdout=out, stderr=subprocess.DEVNULL)
    anon = hwm = 0
    if not watch:
        code = p.wait()
        return time.perf_counter() - start, None, None, code
    while p.poll() is None:
        a = status_kib(p.pid, "RssAnon")
        h = status_kib(p.pid, "VmHWM")
        anon = max(anon, a or 0)
        hwm = max(hwm, h or 0)
        time.sleep(0.002)
    return time.perf_counter() - start, anon, hwm, p.returncode


def check(report_path, truth_path):
    with open(truth_path) as f:
        truth = json.load(f)
    with open(report_path) as f:
        try:
            report = json.load(f)
        except ValueError as e:
            return False, {"not a JSON report": str(e)}, truth["classes"]
    got = {}
    for finding in report["findings"]:
        got[finding["class"]] = got.get(finding["class"], 0) + finding["count"]
    want = truth["classes"]
    lines_ok = report["sources"][0]["lines"] == truth["lines"]
    return got == want and lines_ok, got, want


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="0.5,1,2,8", help="GB, comma-separated")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/cudnnlog-bench")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--features", default="", help="cudnnlog's cargo features, e.g. hyperscan")
    ap.add_argument("--bin", help="take cudnnlog and loggen from this directory (implies --no-build)")
    ap.add_argument("--rg", default="rg", help="the ripgrep binary")
    ap.add_argument("--cpus", help="core counts to pin every tool to with taskset, e.g. 2,16")
    ap.add_argument("--skip", default="", help="parts to leave out: anchors, burst, startup")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="check the benchmark itself runs and answers right: a debug build, 20 MB, one run "
        "(its times mean nothing); exits 1 on a wrong answer, as every run does",
    )
    args = ap.parse_args()
    global BIN, RG
    RG = args.rg
    if args.bin:
        BIN, args.no_build = os.path.abspath(args.bin), True
    if args.smoke:
        BIN = os.path.join(ROOT, "target", "debug")
        args.sizes, args.runs = "0.02", 1

    if not args.no_build:
        build(release=not args.smoke, features=args.features)
    for tool in (RG, "wc") + (("taskset",) if args.cpus else ()):
        if shutil.which(tool) is None:
            sys.exit(f"bench: `{tool}` is not installed (apt-get install ripgrep coreutils)")
    os.makedirs(args.dir, exist_ok=True)
    anchors = os.path.join(args.dir, "anchors.txt")
    with open(anchors, "w") as f:
        subprocess.run([os.path.join(BIN, "cudnnlog"), "patterns", "list", "--format", "anchors"], stdout=f, check=True)
    n_anchors = sum(1 for _ in open(anchors))
    rg_version = subprocess.run([RG, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    cpu = cpu_model()

    print(f"machine: {platform.node()}, {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}")
    built = f"target/release, features: {args.features}" if args.features else "target/release"
    print(f"tools: cudnnlog ({built}), {rg_version}, wc; {args.runs} runs each, interleaved")
    print()
    keywords = os.path.join(ROOT, "bench", "triage-keywords.txt")
    n_keywords = sum(1 for l in open(keywords) if l.strip())
    print(f"comparisons: rg -F with the {n_keywords} triage keywords (bench/triage-keywords.txt: what a user greps for), "
          f"rg -F with the catalog's {n_anchors} anchors, and `wc -l` (the newline-count floor)")
    print()
    skip = set(filter(None, args.skip.split(",")))
    cpus = [int(c) for c in args.cpus.split(",")] if args.cpus else [None]
    if "startup" not in skip:
        startup(anchors, keywords, args)
    wrong = 0 if "burst" in skip else burst(keywords, args)
    print("| size | cpus | cudnnlog s | GiB/s | fresh s | rg kw s | rg anchors s | wc -l s | cat s | ÷ rg kw | ÷ rg anchors "
          "| fresh ÷ mapped | ÷ floor | peak anon MiB (mapped / fresh) | answer |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    scaling = []
    for size in [float(s) for s in args.sizes.split(",")]:
        log = os.path.join(args.dir, f"train-{size:g}g.log")
        generate(log, size, args.seed)
        with open(log, "rb") as f:  # warm the page cache
            while f.read(16 << 20):
                pass
        speeds = {}
        for n in cpus:
            ok, speed = table(log, size, n, anchors, keywords, skip, args)
            wrong += not ok
            speeds[n] = speed
        if len(cpus) > 1:
            lo, hi = cpus[0], cpus[-1]
            scaling.append(
                f"{size:g} GB: {', '.join(f'{speeds[n]:.2f} GiB/s on {n}' for n in cpus)}; "
                f"{hi} ÷ {lo} cores: {speeds[hi] / speeds[lo]:.2f}× ({speeds[hi] / speeds[lo] / (hi / lo):.2f} of linear)"
            )
    for line in scaling:
        print(line)
    if wrong:
        sys.exit(f"bench: {wrong} of the reports do not match the generator's truth")


def table(log, size, n, anchors, keywords, skip, args):
    """One row of the table: every tool on `log`, pinned to `n` cores (all
    when None), interleaved; whether both reports are right, and the mapped
    scan's GiB/s."""
    global PIN
    PIN = ["taskset", "-c", f"0-{n - 1}"] if n else []
    tag = f"{size:g}g-{n or 'all'}"
    report = os.path.join(args.dir, f"report-{tag}.json")
    fresh_report = os.path.join(args.dir, f"report-{tag}-fresh.json")
    scan = [os.path.join(BIN, "cudnnlog"), "scan", "--format", "json", log]
    cmds = {
        "cudnnlog": scan,
        # The same log touched first: modified seconds ago, so it is
        # streamed with positioned reads instead of mapped.
        "fresh": scan,
        "rg kw": [RG, "-c", "-F", "-f", keywords, log],
        "rg anchors": [RG, "-c", "-F", "-f", anchors, log],
        "wc": ["wc", "-l", log],
        "cat": ["cat", log],
    }
    if "anchors" in skip:
        del cmds["rg anchors"]
    wall = {k: [] for k in cmds}
    mem = {k: 0 for k in cmds}
    for _ in range(args.runs):
        for name, cmd in cmds.items():
            if name == "fresh":
                os.utime(log)
            elif name == "cudnnlog":
                past = time.time() - 3600
                os.utime(log, (past, past))
            # Not /dev/null: GNU grep stops at the first match when its
            # output is /dev/null.
            if name == "cat":
                sink = os.devnull
            else:
                sink = {"cudnnlog": report, "fresh": fresh_report}.get(name, os.path.join(args.dir, "other.out"))
            with open(sink, "w") as out:
                t, _, _, _ = timed(cmd, out)
            wall[name].append(t)
    # Peak memory, from one watched (untimed) run of each cudnnlog scan.
    for name in ("fresh", "cudnnlog"):
        if name == "fresh":
            os.utime(log)
        else:
            past = time.time() - 3600
            os.utime(log, (past, past))
        with open(os.path.join(args.dir, "other.out"), "w") as out:
            _, anon, _, _ = timed(cmds[name], out, watch=True)
        mem[name] = anon or 0
    PIN = []
    past = time.time() - 3600
    os.utime(log, (past, past))
    ok, got, want = check(report, log + ".truth.json")
    ok_fresh, _, _ = check(fresh_report, log + ".truth.json")
    med = {k: statistics.median(v) for k, v in wall.items()}
    c = med["cudnnlog"]
    gib = os.path.getsize(log) / (1 << 30) / c
    # A skipped comparison prints as a dash, not as nan.
    anchored = "rg anchors" in wall
    rg_anchors = f"{med['rg anchors']:.2f}" if anchored else "–"
    per_anchors = f"{c / med['rg anchors']:.2f}" if anchored else "–"
    print(
        f"| {size:g} GB | {n or os.cpu_count()} | {c:.3f} | {gib:.2f} | {med['fresh']:.3f} | {med['rg kw']:.3f} "
        f"| {rg_anchors} | {med['wc']:.3f} | {med['cat']:.3f} "
        f"| {c / med['rg kw']:.2f} | {per_anchors} | {med['fresh'] / c:.2f} | {c / med['wc']:.1f} "
        f"| {mem['cudnnlog'] / 1024:.1f} / {mem['fresh'] / 1024:.1f} "
        f"| {'matches truth' if ok and ok_fresh else 'WRONG'} |",
        flush=True,
    )
    if not ok:
        print(f"  got {got}\n  want {want}", file=sys.stderr)
    return ok and ok_fresh, gib


# A cuDNN v8 warning as PyTorch prints it, and the source line Python's
# warnings module prints under it.
WARNING = (
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a "
    "cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: "
    "CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n"
    "  return F.conv2d(input, weight, bias, self.stride,\n"
)


def burst(keywords, args):
    """A burst: a million copies of one warning (with its source line; and
    four ranks' copies, interleaved), each log between two step lines, timed
    against the keyword grep; each report must count every copy. Returns the
    number of wrong answers."""
    copies = 20_000 if args.smoke else 1_000_000
    shapes = {
        "one warning": WARNING,
        "4 ranks interleaved": "".join(
            "".join(f"[rank{r}]:{line}\n" for line in WARNING.splitlines()) for r in range(4)
        ),
    }
    wrong = 0
    for name, period in shapes.items():
        log = os.path.join(args.dir, f"burst-{name.split()[0]}-{copies}.log")
        n = copies // period.count("UserWarning")
        with open(log, "w") as f:
            f.write("INFO train: step 1 loss 0.5\n")
            f.write(period * n)
            f.write("INFO train: step 2 loss 0.5\n")
        past = time.time() - 3600
        os.utime(log, (past, past))
        report = os.path.join(args.dir, "burst-report.json")
        cmds = {
            "cudnnlog": [os.path.join(BIN, "cudnnlog"), "scan", "--format", "json", log],
            "rg kw": [RG, "-c", "-F", "-f", keywords, log],
        }
        wall = {k: [] for k in cmds}
        for _ in range(args.runs):
            for tool, cmd in cmds.items():
                with open(report if tool == "cudnnlog" else os.path.join(args.dir, "other.out"), "w") as out:
                    t, _, _, _ = timed(cmd, out)
                wall[tool].append(t)
        with open(report) as f:
            found = {x["class"]: x["count"] for x in json.load(f)["findings"]}
        ok = found.get("cudnn.plan_failed") == n * period.count("UserWarning")
        wrong += not ok
        med = {k: statistics.median(v) for k, v in wall.items()}
        print(
            f"burst of {copies:,} warnings ({name}, {os.path.getsize(log) / 1e6:.0f} MB): cudnnlog {med['cudnnlog']:.2f} s, "
            f"rg kw {med['rg kw']:.2f} s, ÷ rg kw {med['cudnnlog'] / med['rg kw']:.1f}, "
            f"{med['cudnnlog'] / copies * 1e9:.0f} ns a warning; "
            f"{'counted every copy' if ok else f'WRONG: {found}'}"
        )
        os.remove(log)
    print()
    return wrong


def startup(anchors, keywords, args):
    """Start-up: a 6-byte log, many runs each, interleaved; medians."""
    tiny = os.path.join(args.dir, "tiny.log")
    with open(tiny, "w") as f:
        f.write("hello\n")
    cmds = {
        "cudnnlog": [os.path.join(BIN, "cudnnlog"), "scan", tiny],
        "rg kw": [RG, "-c", "-F", "-f", keywords, tiny],
        "rg anchors": [RG, "-c", "-F", "-f", anchors, tiny],
    }
    wall = {k: [] for k in cmds}
    for _ in range(max(args.runs, 5) * 6):
        for name, cmd in cmds.items():
            with open(os.devnull, "w") as out:
                t, _, _, _ = timed(cmd, out)
            wall[name].append(t)
    med = {k: statistics.median(v) * 1000 for k, v in wall.items()}
    print(
        f"start-up on a 6-byte log (median ms): cudnnlog {med['cudnnlog']:.1f}, rg kw {med['rg kw']:.1f}, "
        f"rg anchors {med['rg anchors']:.1f}; cudnnlog ÷ rg kw {med['cudnnlog'] / med['rg kw']:.2f}, "
        f"÷ rg anchors {med['cudnnlog'] / med['rg anchors']:.2f}"
    )
    print()


if __name__ == "__main__":
    main()
