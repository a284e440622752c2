"""The package in a process forked after it was used: ``multiprocessing``'s
default start method on Linux, a pre-forking server, ``os.fork``. A forked
child has none of its parent's threads; every entry point must still give
the parent's answer there, not wait for ever. Every wait here is bounded:
a hang fails the test instead of hanging it.

Each input is large enough to be scanned on several threads (a length-one
parallel loop runs inline and would pass anyway)."""

import gzip
import multiprocessing
import os
import pickle
import signal
import time
from types import SimpleNamespace

import pytest

import cudnnlog
from conftest import training_log

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform"),
    # Python 3.12 warns that forking a process with threads may deadlock
    # the child: what these tests check is that this package's do not.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

# Seconds a child may take: a few are enough on two cores.
WAIT = 120


def primaries(verdicts):
    return sorted((v["path"], v.get("primary")) for v in verdicts)


def triage_in_child(path):
    return primaries(cudnnlog.triage(path))


def test_triage_in_a_forked_pool_after_the_parent_used_it(fleet):
    expected = primaries(cudnnlog.triage(fleet))  # the parent's threads start
    assert len(expected) == 5
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pending = pool.map_async(triage_in_child, [str(fleet)] * 4)
        got = pending.get(timeout=WAIT)  # TimeoutError when a child hangs
    assert got == [expected] * 4


def in_child(work):
    """``work()`` in a child made by ``os.fork``: ``("ok", its result)`` or
    ``("error", repr(exception))``. Fails the test when the child has not
    ended within ``WAIT`` seconds."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            try:
                out = ("ok", work())
            except BaseException as e:  # noqa: BLE001 - reported to the parent
                out = ("error", repr(e))
            with os.fdopen(w, "wb") as f:
                pickle.dump(out, f)
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.monotonic() + WAIT
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            pytest.fail(f"the forked child was still running after {WAIT} s: hung")
        time.sleep(0.02)
    with os.fdopen(r, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("fork")
    log = training_log(24 << 20)  # three 8 MiB windows
    path = d / "train.log"
    path.write_bytes(log)
    gz = d / "train.log.gz"
    gz.write_bytes(gzip.compress(log, compresslevel=1))
    fleet = d / "fleet"
    fleet.mkdir()
    for i in range(4):
        (fleet / f"job-{i}.log").write_bytes(log[-(2 << 20) :])
    # More than one 64 MiB chunk: bytes scanned in parallel.
    big = training_log(70 << 20)
    return SimpleNamespace(path=path, gz=gz, fleet=fleet, big=big)


def answers(inputs):
    """What every entry point says of the inputs (each runs on threads)."""
    scanner = cudnnlog.Scanner()
    return {
        "scan(bytes)": cudnnlog.scan(inputs.big)["findings"][0]["first"],
        "scan(path)": cudnnlog.scan(inputs.path)["findings"][0]["first"],
        "scan(gzip path)": cudnnlog.scan(inputs.gz)["findings"][0]["first"],
        "verdict(path)": cudnnlog.verdict(inputs.path),
        "Scanner.verdict(bytes)": scanner.verdict(inputs.big)["first"],
        "triage": primaries(cudnnlog.triage(inputs.fleet)),
    }


def test_every_entry_point_in_an_os_fork_child(inputs):
    expected = answers(inputs)  # the parent's threads start
    assert expected["triage"] == [(str(inputs.fleet / f"job-{i}.log"), "cuda.oom") for i in range(4)]
    assert in_child(lambda: answers(inputs)) == ("ok", expected)
    # The parent's own threads still work.
    assert answers(inputs) == expected


def test_a_child_of_a_child_makes_its_own_threads_too(fleet):
    expected = primaries(cudnnlog.triage(fleet))

    def grandchild():
        status = in_child(lambda: primaries(cudnnlog.triage(fleet)))
        return status, primaries(cudnnlog.triage(fleet))

    assert in_child(grandchild) == ("ok", (("ok", expected), expected))


def test_a_triage_begun_before_the_fork_is_refused_in_the_child(fleet):
    it = cudnnlog.triage(fleet)

    def child():
        try:
            next(it)
        except cudnnlog.CudnnlogError as e:
            return str(e)
        return "no error"

    status, message = in_child(child)
    assert status == "ok"
    assert "before the process forked" in message
    assert "triage() again" in message
    # The parent's iterator is whole.
    assert len(list(it)) == it.jobs == 5
