#!/usr/bin/env python3
"""Runs cudnnlog on hostile inputs and checks that it stays bounded.

    python3 bench/hostile.py                    # every input, full size
    python3 bench/hostile.py --scale 0.1        # inputs a tenth the size
    python3 bench/hostile.py --only chain       # the inputs whose name has `chain`

Each input is generated deterministically into --dir (reused when present)
and scanned by the release binary (once; --repeat times, the median, when a
run takes under a second): `cudnnlog scan -q INPUT`, or `-` with the input
piped on standard input for the stream cases, or `--format json` where the
answer is checked. Its wall time and peak *anonymous* memory (RssAnon from
/proc/<pid>/status, polled: heap and stacks, not a mapped file's pages) are
measured, and its time per byte is compared with a normal log's: the
repository's clean real training logs (fixtures/real/*.log) repeated to 1,
8, 64 and 256 MiB, ending with every failed one once (a job that ran long,
then died), scanned the same way (as a file, or piped for an input that is
streamed: piped or compressed). An input is compared with the largest normal
log not bigger than it; its bytes are those the scan has to read (a
compressed input's decompressed size) and at least 1 MiB, so that a tiny
input is not blamed for the start-up.

An input passes when its peak anonymous memory is at most 128 MiB, its time
per byte at most 10× the normal log's (an input of no known size, such as
/proc/self/pagemap, within 10 s), its exit status 0, 1 or 2 (not a signal,
not killed at --timeout) and its expected answer, if any, holds. The table is
Markdown; the exit status is 1 when an input fails.
"""


import argparse
import gzip
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import cpu_model, status_kib  # noqa: E402 (bench.py's /proc readers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MiB = 1 << 20
GiB = 1 << 30
MAX_ANON_MIB = 128
MAX_SLOWDOWN = 10.0
NO_SIZE_LIMIT_S = 10.0
NORMAL_SIZES = [1 * MiB, 8 * MiB, 64 * MiB, 256 * MiB]
BLOCK = 8 * MiB  # the stream reader's block

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
    "GPU 0 has a total capacity of 79.15 GiB of which 3.12 MiB is free."
)

# Words of consonant-vowel syllables, without n, r, c or h (no `nan`, `err`,
# `oom`, `cuda`...): no pattern's anchor is made of them.
_C, _V = "bdfgklmpstvz", "aeiou"
_r = random.Random(1)
WORDS = sorted({"".join(_r.choice(_C) + _r.choice(_V) for _ in range(3)) for _ in range(400)})


def timed(cmd, out, producer=None, timeout=None):
    """Runs cmd, its stdin fed by the producer command when given.

    Returns (wall seconds, peak RssAnon KiB, exit code, killed at timeout)."""
    start = time.perf_counter()
    feed = None
    stdin = subprocess.DEVNULL
    if producer is not None:
        feed = subprocess.Popen(producer, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        stdin = feed.stdout
    p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=subprocess.DEVNULL)
    if feed is not None:
        feed.stdout.close()  # the scan holds the pipe's read end
    anon = 0
    killed = False
    while p.poll() is None:
        anon = max(anon, status_kib(p.pid, "RssAnon") or 0)
        if timeout is not None and time.perf_counter() - start > timeout:
            p.kill()
            killed = True
            p.wait()
            break
        time.sleep(0.002)
    wall = time.perf_counter() - start
    if feed is not None:
        if feed.poll() is None:
            feed.kill()
        feed.wait()
    return wall, anon, p.returncode, killed


def old(path):
    """Dates a generated file an hour back: cudnnlog streams a file modified
    in the last 30 s (a log maybe still written) and maps a finished one."""
    past = time.time() - 3600
    os.utime(path, (past, past))


def made(path):
    return os.path.exists(path) and os.path.exists(path + ".done")


def finish(path):
    open(path + ".done", "w").close()
    old(path)


def write_lines(path, lines):
    """Writes an iterable of str (or bytes) lines, buffered."""
    with open(path, "wb") as f:
        buf = []
        size = 0
        for line in lines:
            b = line.encode() if isinstance(line, str) else line
            buf.append(b)
            size += len(b)
            if size >= MiB:
                f.write(b"".join(buf))
                buf, size = [], 0
        f.write(b"".join(buf))
    finish(path)


# --- inputs -----------------------------------------------------------------


def fixture_logs():
    """The real training logs of fixtures/real: (clean ones, failed ones),
    by their expected reports."""
    real = os.path.join(ROOT, "fixtures", "real")
    clean, failed = [], []
    for name in sorted(os.listdir(real)):
        if not name.endswith(".log"):
            continue
        with open(os.path.join(real, name), "rb") as f:
            data = f.read()
        data = data if data.endswith(b"\n") else data + b"\n"
        outcome = "failed"
        try:
            with open(os.path.join(real, name[: -len(".log")] + ".expected.json")) as f:
                outcome = json.load(f).get("outcome", "failed")
        except (OSError, ValueError):
            pass
        (clean if outcome == "clean" else failed).append(data)
    return b"".join(clean), b"".join(failed)


def make_normal(path, size):
    """A training log of `size` bytes: the clean real logs repeated, then
    every failed one once, as a job that ran long and then died."""
    if made(path):
        return
    unit, tail = fixture_logs()
    with open(path, "wb") as f:
        left = size - len(tail)
        while left > 0:
            f.write(unit[:left])
            left -= len(unit)
        f.write(tail)
    finish(path)


def noise_line(i):
    """A training-progress line, distinct for each i, no error in it."""
    return (f"[rank{i % 8}] epoch {i // 50000} step {i}/1000000 loss {2.5 - (i % 9973) / 9973:.4f} "
            f"lr {3e-4 * (1 - i / 2e6):.3e} grad_norm {0.5 + (i * 7919 % 1000) / 1000:.3f} "
            f"tok/s {120000 + i * 31 % 9000}\n")


def chain(depth, start=0):
    for n in range(start, start + depth):
        yield "Traceback (most recent call last):\n"
        yield f'  File "x.py", line {n + 1}, in f\n'
        yield f"RuntimeError: step {n}\n"
        yield "\n"
        yield "During handling of the above exception, another exception occurred:\n"
        yield "\n"
    yield "Traceback (most recent call last):\n"
    yield '  File "x.py", line 1, in f\n'
    yield OOM + "\n"


def gen_zeros(path, size):
    if made(path):
        return
    with open(path, "wb") as f:
        write_zeros(f, size)
    finish(path)


def write_zeros(f, size):
    """Writes `size` zero bytes to f, a MiB at a time."""
    chunk = bytes(MiB)
    left = size
    while left > 0:
        f.write(chunk[: min(left, MiB)])
        left -= MiB


def gen_gzip_zeros(path, size):
    if made(path):
        return
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
        write_zeros(f, size)
    finish(path)


def gen_zstd_zeros(path, size):
    if made(path):
        return
    with open(path, "wb") as out:
        feed = subprocess.Popen(["head", "-c", str(size), "/dev/zero"], stdout=subprocess.PIPE)
        subprocess.run(["zstd", "-q", "-c"], stdin=feed.stdout, stdout=out, check=True)
        feed.wait()
    finish(path)


def gen_zstd_window(path):
    """A zstd frame whose header declares a 2 GiB window, then one raw block
    of log text (with the OOM) as its last block."""
    if made(path):
        return
    # Frame_Header_Descriptor 0x00: no content size, not single-segment (so a
    # Window_Descriptor follows), no checksum, no dictionary.
    # Window_Descriptor: exponent 21, mantissa 0: 1 << (10 + 21) = 2 GiB.
    header = b"\x28\xb5\x2f\xfd" + bytes([0x00, 21 << 3])
    text = ("".join(noise_line(i) for i in range(20)) + OOM + "\n").encode()
    # Block_Header: Last_Block 1, Block_Type 0 (raw), Block_Size.
    block = (1 | (0 << 1) | (len(text) << 3)).to_bytes(3, "little")
    with open(path, "wb") as f:
        f.write(header + block + text)
    finish(path)


def gen_giant_line(path, size):
    if made(path):
        return
    rng = random.Random(5)
    piece = " ".join(rng.choice(WORDS) for _ in range(200)).encode() + b" "
    with open(path, "wb") as f:
        left = size
        while left > 0:
            f.write(piece[:left])
            left -= len(piece)
        f.write(b"\n" + OOM.encode() + b"\n")
    finish(path)


def gen_straddle(path, depth):
    """Normal lines to about 8 MiB less half the chain, then the chain and
    the OOM: the chain straddles the stream's first block boundary."""
    if made(path):
        return
    chain_bytes = "".join(chain(depth)).encode()
    pad = BLOCK - len(chain_bytes) // 2

    def lines():
        n, i = 0, 0
        while True:
            line = noise_line(i)
            if n + len(line) > pad:
                break
            n += len(line)
            i += 1
            yield line
        yield chain_bytes

    write_lines(path, lines())


def gen_junk_oom(path, size):
    """Invalid UTF-8 and NUL runs, the OOM line in the middle."""
    if made(path):
        return
    rng = random.Random(9)
    bad = [b"\xff\xfe\xfd", b"\xc0\xaf", b"\x80\x81\x82", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]
    with open(path, "wb") as f:
        n, oom_done = 0, False
        while n < size:
            if not oom_done and n >= size // 2:
                line = b"\0" * 4096 + b"\n" + b"\xff\xfe" + b"\n" + OOM.encode() + b"\n" + b"\0" * 4096 + b"\xc3\n"
                oom_done = True
            elif rng.random() < 0.3:
                line = b"\0" * rng.choice([1, 100, 4096, 65536]) + b"\n"
            else:
                line = b" ".join(rng.choice(bad) + rng.choice(WORDS).encode() for _ in range(12)) + b"\n"
            f.write(line)
            n += len(line)
    finish(path)


# --- directory trees (a directory is scanned; its size is a count) --------


def distinct_ooms(n):
    """`n` out-of-memory messages, each with its own numbers."""
    for i in range(n):
        yield (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {i % 997 + 1}.{i % 100:02d} MiB. "
               f"GPU {i % 8} has a total capacity of 79.15 GiB of which {i % 4093}.{i % 89:02d} MiB is free. "
               f"Process {100000 + i} has 78.{i % 97:02d} GiB memory in use.\n")


def interleaved_ranks(n):
    """`n` ranks' lines, one each in turn: a step, then each rank's timeout."""
    for i in range(n):
        yield f"[rank{i}]:[I1201 10:00:00.{i % 1000000:06d}] step 7 loss 0.{i % 1000:03d}\n"
    for i in range(n):
        yield (f"[rank{i}]:[E1201 10:10:00.{i % 1000000:06d}] [Rank {i}] Watchdog caught collective operation "
               f"timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
               f"ran for 600012 milliseconds before timing out.\n")


def distinct_signatures(n):
    """`n` errors of unknown kinds, each worded its own way."""
    rng = random.Random(23)
    for _ in range(n):
        yield f"RuntimeError: {' '.join(rng.choice(WORDS) for _ in range(10))}\n"


def gen_anchor_line(path, size, binary):
    """One line of `size` bytes made of the catalog's anchors, over and over."""
    if os.path.exists(path):
        return
    anchors = subprocess.run([binary, "patterns", "list", "--format", "anchors"], capture_output=True,
                             text=True, check=True).stdout.split("\n")
    piece = " ".join(a for a in anchors if a).encode()
    with open(path + ".tmp", "wb") as f:
        left = size
        while left > 0:
            f.write(piece[:left])
            left -= min(left, len(piece))
        f.write(b"\n")
    os.replace(path + ".tmp", path)


def gen_fan_out(root, levels, fan):
    """`levels` levels of `fan` links to the next directory, the last holding
    an OOM: fan ** levels paths to one log (the linked directories beside
    `root`, so that only links lead into them)."""
    if made(root):
        return
    shutil.rmtree(root, ignore_errors=True)
    home = root + ".dirs"
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(root)
    for i in range(1, levels + 1):
        os.makedirs(os.path.join(home, f"d{i}"))
    for level in range(levels):
        at = root if level == 0 else os.path.join(home, f"d{level}")
        for k in range(fan):
            os.symlink(os.path.join(home, f"d{level + 1}"), os.path.join(at, f"l{k:02d}"))
    with open(os.path.join(home, f"d{levels}", "train.log"), "w") as f:
        f.write(OOM + "\n")
    finish(root)


def gen_big_ignore(root, size):
    """A `.gitignore` of `size` bytes of globs beside a log with an OOM."""
    if made(root):
        return
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    with open(os.path.join(root, "train.log"), "w") as f:
        f.write(OOM + "\n")
    with open(os.path.join(root, ".gitignore"), "w") as f:
        n = i = 0
        while n < size:
            line = (f"run-{i}/*.tmp{i % 97}\n", f"**/ckpt_{i}_*.bin\n", f"/out/{i}/[a-z]*.log\n")[i % 3]
            f.write(line)
            n += len(line)
            i += 1
    finish(root)


def gen_failed_jobs(root, n):
    """n jobs in one directory, each a small log that failed its own way
    (a fingerprint of its own), as a fleet of unrelated failures is."""
    if not made(root):
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
        for i in range(n):
            a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
            with open(os.path.join(root, f"job-{i:06d}.log"), "w") as f:
                f.write(f"INFO step {i} loss 0.5\nTraceback (most recent call last):\n"
                        f"  File \"train.py\", line 9, in step\nValueError: no shard {a} {b} in the split\n")
        finish(root)
    when = time.time() - 3600
    for name in os.listdir(root):
        os.utime(os.path.join(root, name), (when, when))


def gen_tree(root, n, fresh):
    """n small logs, one per job directory, four levels deep (paths of about
    110 bytes, as a cluster's job directories have); all written just now
    when `fresh` (cudnnlog reads a file written in the last 30 s, and maps
    an older one), else an hour ago."""
    if not made(root):
        shutil.rmtree(root, ignore_errors=True)
        for i in range(n):
            d = os.path.join(root, f"cluster-{i // 1000:02d}-aaaaaaaaaaaaaaaaaaaa",
                             f"experiment-{i // 100 % 10:02d}-bbbbbbbbbb", f"run-{i // 10 % 10:02d}-cccccccccccccccc",
                             f"job-{i:05d}")
            os.makedirs(d)
            with open(os.path.join(d, "train.log"), "w") as f:
                f.write("INFO step 1 loss 0.5\n")
        finish(root)
    when = time.time() if fresh else time.time() - 3600
    for d, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(d, name), (when, when))


def one_source(report):
    n = len(report.get("sources") or [])
    return n == 1, f"{n} source{'s' if n != 1 else ''}"


def has_class(cls):
    def check(report):
        got = [f.get("class") for f in report.get("findings", [])]
        return (cls in got), f"{cls} {'found' if cls in got else 'missing'} (primary {report.get('primary')})"
    return check


def unlike_templates(n):
    """n error lines none like another: min(n, 1000) templates of one line."""
    want = min(n, 1000)

    def check(report):
        got = report.get("unclassified") or []
        ok = len(got) == want and all(t.get("count") == 1 for t in got)
        return ok, f"{len(got)} templates, largest {max((t.get('count', 0) for t in got), default=0)} lines"
    return check


class Case:
    def __init__(self, name, make=None, path=None, piped=False, producer=None, bytes_=None,
                 size_note=None, check=None, streamed=False, json_out=False, note="", tree=False, fmt=None):
        self.name = name
        self.make = make  # () -> None, generates `path`
        self.path = path
        self.piped = piped
        self.producer = producer  # a command that writes the input on stdout
        self.bytes = bytes_  # bytes the scan reads; None: unknown
        self.size_note = size_note
        self.check = check  # report dict -> (ok, text)
        self.streamed = streamed or piped
        self.json = json_out or check is not None
        self.note = note
        self.tree = tree  # a directory: its size is size_note, its limit NO_SIZE_LIMIT_S
        self.fmt = fmt  # scanned with --format fmt (what a user sees), not -q


def cases(d, scale, binary):
    def sz(n):
        return max(4096, int(n * scale))

    def cnt(n):
        return max(1, int(n * scale))

    out = []
    p = lambda name: os.path.join(d, name)  # noqa: E731

    z = sz(256 * MiB)
    out.append(Case("zeros stdin", producer=["head", "-c", str(z), "/dev/zero"], piped=True, bytes_=z))
    out.append(Case("zeros file", make=lambda: gen_zeros(p(f"zeros-{z}.bin"), z), path=p(f"zeros-{z}.bin"), bytes_=z))

    g = sz(4 * GiB)
    gz = p(f"zeros-{g}.gz")
    out.append(Case("gzip bomb file", make=lambda: gen_gzip_zeros(gz, g), path=gz, bytes_=g, streamed=True,
                    size_note=f"gz of {human(g)}"))
    out.append(Case("gzip bomb stdin", make=lambda: gen_gzip_zeros(gz, g), path=gz, piped=True,
                    producer=["cat", gz], bytes_=g, size_note=f"gz of {human(g)}"))

    if shutil.which("zstd"):
        zs = p(f"zeros-{g}.zst")
        out.append(Case("zstd zeros file", make=lambda: gen_zstd_zeros(zs, g), path=zs, bytes_=g, streamed=True,
                        size_note=f"zst of {human(g)}"))
    else:
        out.append(Case("zstd zeros file", note="skipped: the `zstd` CLI is not installed"))
    zw = p("window-2g.zst")
    out.append(Case("zstd 2 GiB window", make=lambda: gen_zstd_window(zw), path=zw, bytes_=None, streamed=True,
                    note="expected: refused or bounded"))

    cr = sz(500 * MiB)
    out.append(Case(r"\r only stdin", producer=["sh", "-c", f"head -c {cr} /dev/zero | tr '\\0' '\\r'"],
                    piped=True, bytes_=cr))

    out.append(Case("/proc/self/pagemap", path="/proc/self/pagemap", bytes_=None,
                    note="expected: refused or bounded"))

    gl = sz(100 * MiB)
    glp = p(f"giant-line-{gl}.log")
    out.append(Case("giant line + OOM", make=lambda: gen_giant_line(glp, gl), path=glp, check=has_class("cuda.oom")))

    depth = cnt(300_000)
    dc = p(f"chain-{depth}.log")
    out.append(Case(f"chain {depth} deep + OOM", make=lambda: write_lines(dc, chain(depth)), path=dc,
                    check=has_class("cuda.oom")))

    st = p("straddle-1000.log")
    out.append(Case("straddle chain file", make=lambda: gen_straddle(st, 1000), path=st, check=has_class("cuda.oom")))
    out.append(Case("straddle chain stdin", make=lambda: gen_straddle(st, 1000), path=st, piped=True,
                    producer=["cat", st], check=has_class("cuda.oom"), note="same primary as the file"))

    nn = cnt(6000)
    nanp = p(f"nan-{nn}.log")
    out.append(Case(f"{nn} distinct nan ops", make=lambda: write_lines(nanp, (
        f"RuntimeError: Function 'Op{i:08d}Backward0' returned nan values in its 0th output.\n" for i in range(nn))),
        path=nanp))

    nt = cnt(3000)
    tbp = p(f"tracebacks-{nt}.log")

    def tracebacks():
        for i in range(nt):
            yield "Traceback (most recent call last):\n"
            yield f'  File "train.py", line {100 + i % 50}, in step\n'
            yield "    loss = model(batch)\n"
            yield f'  File "pkg/mod.py", line {10 + i % 7}, in forward\n'
            yield "    raise Error()\n"
            yield f"pkg.mod.Error{i:05d}: something failed\n"
            yield "\n"

    out.append(Case(f"{nt} distinct tracebacks", make=lambda: write_lines(tbp, tracebacks()), path=tbp))

    def errors(n, path):
        rng = random.Random(12)
        write_lines(path, (f"2026-01-01 00:00:00 ERROR worker: {' '.join(rng.choice(WORDS) for _ in range(12))}\n"
                           for _ in range(n)))

    for n in (12_000, 120_000):  # the issue's, and ten times it (past the template limit longer)
        ne = cnt(n)
        erp = p(f"errors-{ne}.log")
        out.append(Case(f"{ne} unlike ERROR lines", make=lambda ne=ne, erp=erp: errors(ne, erp), path=erp,
                        check=unlike_templates(ne)))

    nl = cnt(1_000_000)
    nop = p(f"noise-{nl}.log")
    out.append(Case(f"{nl} distinct noise lines", make=lambda: write_lines(nop, (noise_line(i) for i in range(nl))),
                    path=nop))

    # CPU per byte on inputs that defeat caches and indexes (issue 38 item 8).
    no = cnt(1_000_000)
    oomp = p(f"ooms-{no}.log")
    out.append(Case(f"{no} distinct OOMs", make=lambda: write_lines(oomp, distinct_ooms(no)), path=oomp,
                    check=has_class("cuda.oom")))
    nr = cnt(100_000)
    rkp = p(f"ranks-{nr}.log")
    out.append(Case(f"{nr} interleaved ranks", make=lambda: write_lines(rkp, interleaved_ranks(nr)), path=rkp,
                    json_out=True))
    ns = cnt(200_000)
    sgp = p(f"signatures-{ns}.log")
    out.append(Case(f"{ns} distinct signatures", make=lambda: write_lines(sgp, distinct_signatures(ns)),
                    path=sgp, json_out=True))
    nx = cnt(200_000)
    exp = p(f"exceptions-{nx}.log")
    out.append(Case(f"{nx} distinct exception names", make=lambda: write_lines(exp, (
        f"{WORDS[i % len(WORDS)]}_{i}.{WORDS[(i * 7) % len(WORDS)]}Error{i}: step failed\n" for i in range(nx))),
        path=exp, json_out=True))
    al = sz(12 * MiB)
    alp = p(f"every-anchor-line-{al}.log")
    out.append(Case("one line of every anchor", make=lambda: gen_anchor_line(alp, al, binary), path=alp,
                    json_out=True))
    nu = cnt(12_000)
    unp = p(f"one-shape-{nu}.log")
    out.append(Case(f"{nu} unclassified lines of one shape", make=lambda: write_lines(unp, (
        f"2026-01-01 00:00:{i % 60:02d} ERROR loader: shard {i} of split {WORDS[i % 40]} missing on host{i % 7}\n"
        for i in range(nu))), path=unp, json_out=True))

    jk = sz(32 * MiB)
    jkp = p(f"junk-oom-{jk}.log")
    out.append(Case("bad UTF-8 + NULs + OOM", make=lambda: gen_junk_oom(jkp, jk), path=jkp, check=has_class("cuda.oom")))

    # The filesystem: a directory scanned, judged by its limit of NO_SIZE_LIMIT_S.
    fan = p("fan-out-5x12")
    out.append(Case("links 5 levels x 12", make=lambda: gen_fan_out(fan, 5, 12), path=fan, tree=True,
                    size_note="248,832 paths to 1 log", check=one_source))
    gi = sz(4 * MiB)
    gip = p(f"big-gitignore-{gi}")
    out.append(Case(".gitignore of globs", make=lambda: gen_big_ignore(gip, gi), path=gip, tree=True,
                    size_note=f"{human(gi)} .gitignore", check=has_class("cuda.oom")))
    nt = cnt(50_000)
    trp = p(f"tree-{nt}")
    for fresh in (False, True):
        out.append(Case(f"{nt}-file tree{', fresh' if fresh else ''}", make=lambda fresh=fresh: gen_tree(trp, nt, fresh),
                        path=trp, tree=True, fmt="table",
                        size_note=f"{nt} files in {nt} directories{', written just now' if fresh else ''}"))
    nj = cnt(100_000)
    jbp = p(f"jobs-{nj}")
    for fmt in ("ndjson", "html"):
        out.append(Case(f"{nj} failed jobs, {fmt}", make=lambda: gen_failed_jobs(jbp, nj), path=jbp, tree=True,
                        fmt=fmt, size_note=f"{nj} one-file jobs, each its own fingerprint"))
    return out


def human(n):
    if n is None:
        return "?"
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="run only the inputs whose name contains this (case-insensitive)")
    ap.add_argument("--scale", type=float, default=1.0, help="a factor on the inputs' sizes and counts (0.1: quick)")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "cudnnlog"))
    ap.add_argument("--dir", default="/tmp/cudnnlog-hostile", help="where inputs are generated (reused)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a scan is killed")
    ap.add_argument("--normal-runs", type=int, default=5, help="runs of each normal log (the median)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of an input scanned in under 1 s (the median)")
    args = ap.parse_args()

    if not os.access(args.binary, os.X_OK):
        sys.exit(f"hostile: no binary at {args.binary} (cargo build --release -p cudnnlog-cli)")
    os.makedirs(args.dir, exist_ok=True)
    all_cases = cases(args.dir, args.scale, args.binary)
    if args.only:
        all_cases = [c for c in all_cases if args.only.lower() in c.name.lower()]
    if not all_cases:
        sys.exit("hostile: no input matches --only")

    cpu = cpu_model()
    print(f"machine: {platform.node()}, {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}")
    print(f"binary: {args.binary}; scale {args.scale:g}; inputs in {args.dir}")

    def scan_cmd(c, target):
        if c.json:
            return [args.binary, "scan", "--format", "json", target]
        if c.fmt:
            return [args.binary, "scan", "--format", c.fmt, target]
        return [args.binary, "scan", "-q", target]

    # The normal logs, as a file (mapped) and piped (streamed).
    normal = {}
    for size in NORMAL_SIZES:
        path = os.path.join(args.dir, f"normal-{size}.log")
        make_normal(path, size)
        for mode in ("file", "stdin"):
            walls = []
            for _ in range(args.normal_runs):
                with open(os.path.join(args.dir, "normal.out"), "w") as out:
                    if mode == "file":
                        w, _, _, _ = timed([args.binary, "scan", "-q", path], out)
                    else:
                        w, _, _, _ = timed([args.binary, "scan", "-q", "-"], out, producer=["cat", path])
                walls.append(w)
            normal[(size, mode)] = statistics.median(walls)
    print("normal logs (clean fixtures/real/*.log repeated, the failed ones at the end), median of "
          f"{args.normal_runs}, file / piped: "
          + ", ".join(f"{human(s)} {normal[(s, 'file')]:.3f} / {normal[(s, 'stdin')]:.3f} s" for s in NORMAL_SIZES))
    print()
    print("| input | size | seconds | ÷ normal per byte | peak anon MiB | exit | verdict |")
    print("|---|---|---|---|---|---|---|")

    failed = False
    primaries = {}
    for c in all_cases:
        if c.note.startswith("skipped"):
            print(f"| {c.name} | – | – | – | – | – | {c.note} |", flush=True)
            continue
        if c.make:
            c.make()
        if c.path and not c.path.startswith("/proc/") and not c.piped:
            old(c.path)
        if c.tree:
            file_size = None
            size_text = c.size_note
        else:
            file_size = os.path.getsize(c.path) if c.path and not c.path.startswith("/proc/") else c.bytes
            size_text = human(file_size) + (f" ({c.size_note})" if c.size_note else "")
        out_path = os.path.join(args.dir, "scan.out")
        target = "-" if c.piped else c.path
        # An input of no known size fails past NO_SIZE_LIMIT_S: no need to wait longer.
        no_size = c.tree or (c.bytes is None and not (c.path and not c.path.startswith("/proc/")))
        timeout = min(args.timeout, 1.5 * NO_SIZE_LIMIT_S) if no_size else args.timeout
        # A quick scan is run --repeat times (the median wall, the peak
        # memory): one run of a fraction of a second is machine noise.
        walls = []
        anon = 0
        while True:
            with open(out_path, "w") as out:
                w, a, rc, killed = timed(scan_cmd(c, target), out, producer=c.producer if c.piped else None,
                                         timeout=timeout)
            walls.append(w)
            anon = max(anon, a)
            if killed or rc not in (0, 1, 2) or w >= 1.0 or len(walls) >= args.repeat:
                break
        wall = statistics.median(walls)
        reasons, notes = [], []
        anon_mib = anon / 1024
        if anon_mib > MAX_ANON_MIB:
            reasons.append(f"anon {anon_mib:.0f} MiB > {MAX_ANON_MIB}")
        if c.tree:
            content = None
        else:
            content = c.bytes if c.bytes is not None else (file_size if c.path and not c.path.startswith("/proc/") else None)
        if content is None:
            ratio_text = "–"
            if wall > NO_SIZE_LIMIT_S:
                reasons.append(f"{wall:.1f} s > {NO_SIZE_LIMIT_S:g} s")
        else:
            counted = max(content, MiB)
            base = max([s for s in NORMAL_SIZES if s <= counted] or [NORMAL_SIZES[0]])
            mode = "stdin" if c.streamed else "file"
            per_byte = normal[(base, mode)] / base
            ratio = (wall / counted) / per_byte
            ratio_text = f"{ratio:.1f}"
            if ratio > MAX_SLOWDOWN:
                reasons.append(f"{ratio:.0f}× normal per byte")
        if killed:
            reasons.append(f"killed after {timeout:g} s")
            rc_text = "killed"
        elif rc < 0:
            reasons.append(f"signal {-rc}")
            rc_text = f"signal {-rc}"
        else:
            rc_text = str(rc)
            if rc not in (0, 1, 2):
                reasons.append(f"exit {rc}")
        if c.check and not killed:
            try:
                with open(out_path) as f:
                    report = json.load(f)
                ok, text = c.check(report)
                primaries[c.name] = report.get("primary")
                notes.append(text)
                if not ok:
                    reasons.append(text)
            except (OSError, ValueError) as e:
                reasons.append(f"no JSON report ({type(e).__name__})")
        if c.name == "straddle chain stdin" and "straddle chain file" in primaries:
            a, b = primaries.get("straddle chain file"), primaries.get(c.name)
            if a != b:
                reasons.append(f"primary {b} piped vs {a} as a file")
            else:
                notes.append("same primary as the file")
        if c.note and not c.note.startswith("same"):
            notes.append(c.note)
        if reasons:
            failed = True
            verdict = "**FAIL**: " + "; ".join(reasons)
        else:
            verdict = "pass" + (f" ({'; '.join(notes)})" if notes else "")
        print(f"| {c.name} | {size_text} | {wall:.2f} | {ratio_text} | {anon_mib:.1f} | {rc_text} | {verdict} |",
              flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
