#!/usr/bin/env python3
"""Times fleet triage: one process over a directory of small job logs, against
one process per file (what a script looping over job logs runs today).

    python3 bench/fleet.py                  # 10,000 jobs, 3 runs
    python3 bench/fleet.py --jobs 2000 --runs 1

The fleet is made of the repository's real logs (`fixtures/`: real captures
and logs from public issue threads), copied round-robin into
`bench-data/fleet-N/job-NNNNN.log` with the job number written into each
copy's first line (so no two files are byte-identical), and dated an hour
ago (finished logs). The one-process run is `cudnnlog scan --format ndjson
DIR`; the per-file run starts `cudnnlog scan --format json FILE` once per
file, two at a time (both cores), over a sample of the files, and is
extrapolated. Runs are interleaved. It checks that the one-process run
gives one verdict per file and that sampled verdicts' primaries equal the
per-file scans'.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "cudnnlog")
SKIP = (".json", ".md", ".toml", ".py", ".gz", ".zst")


def fixtures():
    out = []
    for base, dirs, files in os.walk(os.path.join(ROOT, "fixtures")):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(SKIP):
                out.append(os.path.join(base, f))
    return out


def make_fleet(n):
    d = os.path.join(ROOT, "bench-data", f"fleet-{n}")
    marker = os.path.join(d, ".complete")
    if os.path.exists(marker):
        return d
    os.makedirs(d, exist_ok=True)
    logs = [open(p, "rb").read() for p in fixtures()]
    past = time.time() - 3600
    for i in range(n):
        path = os.path.join(d, f"job-{i:05d}.log")
        with open(path, "wb") as f:
            f.write(f"job {i} starting\n".encode())
            f.write(logs[i % len(logs)])
        os.utime(path, (past, past))
    open(marker, "w").close()
    return d


def one_process(d):
    t = time.perf_counter()
    p = subprocess.run([BIN, "scan", "--format", "ndjson", d], capture_output=True)
    elapsed = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"cudnnlog failed ({p.returncode}): {p.stderr.decode()[:500]}")
    verdicts = {}
    for line in p.stdout.splitlines():
        obj = json.loads(line)
        if obj["type"] == "verdict":
            verdicts[obj["path"]] = obj
    return elapsed, verdicts


def per_file(paths):
    def scan(path):
        p = subprocess.run([BIN, "scan", "--format", "json", path], capture_output=True)
        return path, json.loads(p.stdout)["primary"]

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        primaries = dict(pool.map(scan, paths))
    return time.perf_counter() - t, primaries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample", type=int, default=500, help="files for the per-file run")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-p", "cudnnlog-cli"], cwd=ROOT, check=True)
    d = make_fleet(args.jobs)
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".log"))
    step = max(1, len(files) // args.sample)
    sample = files[::step][: args.sample]
    fleet_times, file_times = [], []
    verdicts, primaries = {}, {}
    for _ in range(args.runs):
        t, verdicts = one_process(d)
        fleet_times.append(t)
        t, primaries = per_file(sample)
        file_times.append(t * len(files) / len(sample))
    assert len(verdicts) == len(files), f"{len(verdicts)} verdicts for {len(files)} files"
    wrong = [p for p in sample if verdicts[p]["primary"] != primaries[p]]
    assert not wrong, f"verdicts differ from per-file scans: {wrong[:5]}"
    fleet, per = statistics.median(fleet_times), statistics.median(file_times)
    size = sum(os.path.getsize(f) for f in files)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; {len(files)} jobs, {size / 2**20:.0f} MiB")
    print(f"one process:       {fleet:7.2f} s  {len(files) / fleet:8.0f} jobs/s  (runs: {', '.join(f'{t:.2f}' for t in fleet_times)})")
    print(f"a process per file: {per:6.2f} s  {len(files) / per:8.0f} jobs/s  (extrapolated from {len(sample)} files, 2 at a time)")
    print(f"ratio: one process is {per / fleet:.1f}x faster; verdicts match the per-file scans on {len(sample)} files")


if __name__ == "__main__":
    main()
