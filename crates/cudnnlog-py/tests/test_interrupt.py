"""Ctrl-C (SIGINT) during a long scan raises KeyboardInterrupt at once,
not when the scan is done. Each case runs a child Python process that is
sent SIGINT while it scans; how much of the log it had read when the
exception came shows that the scan was cut short, whatever the machine's
speed. Every wait is bounded: a hang fails the test instead of hanging it.
"""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import fixture_log

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/io"), reason="reads Linux's /proc/PID/io"
)

# Seconds a child may take to start, and to end after SIGINT.
WAIT = 60

# The child restores Python's own SIGINT handler: a child of a shell's
# background job (`cmd &`, a detached CI run) inherits SIGINT ignored, and
# Python then leaves it ignored, so Ctrl-C could never reach the package.
CHILD = r"""
import signal
import sys
signal.signal(signal.SIGINT, signal.default_int_handler)
import cudnnlog

def read_so_far():
    with open("/proc/self/io") as f:
        return dict(line.split(": ") for line in f.read().splitlines())["rchar"].strip()

print("scanning", read_so_far(), flush=True)
try:
    report = cudnnlog.scan(sys.argv[1])
except KeyboardInterrupt:
    print("interrupted", read_so_far(), flush=True)
    sys.exit(3)
print("finished", report["primary"], flush=True)
"""


def read_by(pid):
    """Bytes process `pid` has read so far (its threads' reads included)."""
    with open(f"/proc/{pid}/io") as f:
        return int(dict(line.split(": ") for line in f.read().splitlines())["rchar"])


def start(path):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    word, before = child.stdout.readline().split()
    assert word == "scanning", child.communicate()
    return child, int(before)


def interrupt(child):
    """Sends SIGINT; what the child said then: its word, and the bytes it
    had read when the exception came."""
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail(f"still scanning {WAIT} s after SIGINT")
    word, after = out.split()
    assert (child.returncode, word) == (3, "interrupted"), (out, err)
    return int(after)


def test_ctrl_c_stops_a_scan_of_a_big_log(tmp_path):
    log = fixture_log(256 << 20)
    path = tmp_path / "long.log"
    path.write_bytes(log)
    child, before = start(path)
    # Ctrl-C once the scan has read 16 MiB: it is under way.
    deadline = time.monotonic() + WAIT
    while read_by(child.pid) - before < 16 << 20:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the scan never started"
        time.sleep(0.001)
    after = interrupt(child)
    # Raised before the scan had read the whole log (a scan that ran to
    # its end before raising has read it all).
    assert after - before < len(log)


def test_ctrl_c_stops_a_scan_of_a_pipe_that_goes_on(tmp_path):
    """A log still being written (a FIFO) never ends by itself: SIGINT is
    the only way out."""
    fifo = tmp_path / "live.log"
    os.mkfifo(fifo)
    block = fixture_log(4 << 20)
    total = 192 * len(block)  # 768 MiB, unless the reader goes away
    written = [0]
    under_way = threading.Event()

    def write():
        try:
            with open(fifo, "wb") as f:
                while written[0] < total:
                    f.write(block)
                    written[0] += len(block)
                    if written[0] >= 64 << 20:
                        under_way.set()
        except BrokenPipeError:
            pass  # the reader ended
        finally:
            under_way.set()

    child, _ = start(fifo)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert under_way.wait(WAIT), "the scan never read 64 MiB"
    interrupt(child)
    writer.join(WAIT)
    assert not writer.is_alive()
    # The child stopped reading: the rest of the log found no reader.
    assert written[0] < total
