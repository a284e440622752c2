"""Scanning releases the GIL: another Python thread runs meanwhile.

The test makes the interpreter switch threads only when one blocks or
releases the GIL (a switch interval of 10 minutes), so the counter thread
can advance during `scan` only if `scan` released the GIL: a scan that
held it would see the counter unchanged, whatever the machine's speed.
"""

import sys
import threading
import time

import pytest

import cudnnlog
from conftest import OOM

SIZE = 200 << 20


@pytest.fixture(scope="module")
def big_log():
    line = b"2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 batch 128 loss 2.3145 lr 0.001\n"
    tail = OOM.read_bytes()
    return line * ((SIZE - len(tail)) // len(line)) + tail


@pytest.fixture
def no_forced_switches():
    before = sys.getswitchinterval()
    sys.setswitchinterval(600)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def counting(ticks, stop):
    while not stop.is_set():
        ticks[0] += 1
        time.sleep(0)  # releases the GIL, so the main thread gets it back


def run_with_counter(work):
    ticks, stop = [0], threading.Event()
    t = threading.Thread(target=counting, args=(ticks, stop), daemon=True)
    t.start()
    while ticks[0] == 0:
        time.sleep(0.001)
    before = ticks[0]
    result = work()
    during = ticks[0] - before
    stop.set()
    t.join()
    return result, during


@pytest.mark.usefixtures("no_forced_switches")
def test_scan_of_bytes_releases_the_gil(big_log):
    report, during = run_with_counter(lambda: cudnnlog.scan(big_log))
    assert report["primary"] == "cuda.oom"
    assert report["sources"][0]["bytes"] == len(big_log)
    assert during > 0, "the other thread never ran during the scan"


@pytest.mark.usefixtures("no_forced_switches")
def test_scan_of_a_file_releases_the_gil(big_log, tmp_path):
    path = tmp_path / "big.log"
    path.write_bytes(big_log)
    verdict, during = run_with_counter(lambda: cudnnlog.verdict(path))
    assert verdict["primary"] == "cuda.oom"
    assert during > 0, "the other thread never ran during the scan"


@pytest.mark.usefixtures("no_forced_switches")
def test_triage_waits_without_the_gil(big_log, tmp_path):
    path = tmp_path / "big.log"
    path.write_bytes(big_log)
    verdicts, during = run_with_counter(lambda: list(cudnnlog.triage([path, path])))
    assert [v["primary"] for v in verdicts] == ["cuda.oom"]
    assert during > 0, "the other thread never ran while triage worked"


@pytest.mark.usefixtures("no_forced_switches")
def test_the_control_holds_the_gil():
    """The check itself works: pure-Python work that holds the GIL leaves
    the counter where it was."""

    def busy():
        n = 0
        for i in range(3_000_000):
            n += i
        return n

    _, during = run_with_counter(busy)
    assert during == 0
