#!/usr/bin/env python3
"""Times cudnnlog against ripgrep and grep on the same generated logs.

    python3 bench/bench.py                      # sizes 0.5, 1, 2 and 8 GB, 5 runs each
    python3 bench/bench.py --sizes 1 --runs 3   # a quicker look

For each size it generates a log with `loggen` (seeded; reused when present)
and its ground truth, warms the file into the page cache, then runs, in
turn and several times, `cudnnlog scan --format json`, `rg -c -F -f ANCHORS`
and `grep -c -F -f ANCHORS`, where ANCHORS is the catalog's own anchor list
(`cudnnlog patterns list --format anchors`). Interleaving keeps the three
tools under the same machine noise. It prints medians, the per-pair ratios
and peak memory: for cudnnlog the peak *anonymous* memory (RssAnon: heap and
stacks, not the mapped file's pages), for the others peak RSS. cudnnlog's
findings are checked against the ground truth on every size.
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


def build():
    subprocess.run(
        ["cargo", "build", "--release", "-p", "cudnnlog-cli", "-p", "cudnnlog-loggen"],
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


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def timed(cmd, out):
    """Runs cmd; returns (wall seconds, peak RssAnon KiB, peak VmHWM KiB, exit code)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
    anon = hwm = 0
    while p.poll() is None:
        a = status_kib(p.pid, "RssAnon")
        h = status_kib(p.pid, "VmHWM")
        anon = max(anon, a or 0)
        hwm = max(hwm, h or 0)
        time.sleep(0.002)
    return time.perf_counter() - start, anon, hwm, p.returncode


def check(report_path, truth_path):
    with open(report_path) as f:
        report = json.load(f)
    with open(truth_path) as f:
        truth = json.load(f)
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
    args = ap.parse_args()

    if not args.no_build:
        build()
    for tool in ("rg", "grep"):
        if shutil.which(tool) is None:
            sys.exit(f"bench: `{tool}` is not installed (apt-get install ripgrep grep)")
    os.makedirs(args.dir, exist_ok=True)
    anchors = os.path.join(args.dir, "anchors.txt")
    with open(anchors, "w") as f:
        subprocess.run([os.path.join(BIN, "cudnnlog"), "patterns", "list", "--format", "anchors"], stdout=f, check=True)
    n_anchors = sum(1 for _ in open(anchors))
    rg_version = subprocess.run(["rg", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass

    print(f"machine: {platform.node()}, {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}")
    print(f"tools: cudnnlog (target/release), {rg_version}, grep; {n_anchors} anchors; {args.runs} runs each, interleaved")
    print()
    print("| size | cudnnlog s | rg s | grep s | cudnnlog/rg | cudnnlog/grep | cudnnlog peak anon MiB | rg peak RSS MiB | answer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size in [float(s) for s in args.sizes.split(",")]:
        log = os.path.join(args.dir, f"train-{size:g}g.log")
        generate(log, size, args.seed)
        with open(log, "rb") as f:  # warm the page cache
            while f.read(16 << 20):
                pass
        report = os.path.join(args.dir, f"report-{size:g}g.json")
        cmds = {
            "cudnnlog": [os.path.join(BIN, "cudnnlog"), "scan", "--format", "json", "--quiet", log],
            "rg": ["rg", "-c", "-F", "-f", anchors, log],
            "grep": ["grep", "-c", "-F", "-f", anchors, log],
        }
        wall = {k: [] for k in cmds}
        mem = {k: 0 for k in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                # Not /dev/null: GNU grep stops at the first match when its
                # output is /dev/null.
                sink = report if name == "cudnnlog" else os.path.join(args.dir, f"{name}.out")
                with open(sink, "w") as out:
                    t, anon, hwm, _ = timed(cmd, out)
                wall[name].append(t)
                mem[name] = max(mem[name], anon if name == "cudnnlog" else hwm)
        ok, got, want = check(report, log + ".truth.json")
        med = {k: statistics.median(v) for k, v in wall.items()}
        print(
            f"| {size:g} GB | {med['cudnnlog']:.2f} | {med['rg']:.2f} | {med['grep']:.2f} "
            f"| {med['cudnnlog'] / med['rg']:.2f} | {med['cudnnlog'] / med['grep']:.2f} "
            f"| {mem['cudnnlog'] / 1024:.1f} | {mem['rg'] / 1024:.0f} | {'matches truth' if ok else 'WRONG'} |",
            flush=True,
        )
        if not ok:
            print(f"  got {got}\n  want {want}", file=sys.stderr)


if __name__ == "__main__":
    main()
