"""The pieces of examples/spark_triage.py that need no Spark: balancing
files by size, the local walk, and the remote route (a file streamed from
fsspec in bounded chunks)."""

import gzip
import importlib.util
import os
import shutil
import sys

import pytest

import cudnnlog
from conftest import ASSERT, CLEAN, OOM, REPO

spec = importlib.util.spec_from_file_location("spark_triage", REPO / "examples" / "spark_triage.py")
spark_triage = importlib.util.module_from_spec(spec)
spec.loader.exec_module(spark_triage)


def test_balance_puts_the_largest_files_apart():
    files = [("a", 40), ("b", 10), ("c", 30), ("d", 5), ("e", 20), ("f", 5)]
    buckets = spark_triage.balance(files, 2)
    totals = sorted(sum(s for _, s in b) for b in buckets)
    assert totals == [55, 55]
    assert sorted(p for b in buckets for p, _ in b) == list("abcdef")
    # One huge file has a partition of its own; the rest share the others.
    buckets = spark_triage.balance([("huge", 3 << 30)] + [(f"s{i}", 100) for i in range(9)], 3)
    assert [("huge", 3 << 30)] in buckets
    assert sorted(len(b) for b in buckets) == [1, 4, 5]


def test_balance_never_makes_empty_partitions():
    assert spark_triage.balance([("a", 1), ("b", 2)], 8) == [[("b", 2)], [("a", 1)]]
    assert spark_triage.balance([("a", 1)], 0) == [[("a", 1)]]
    assert spark_triage.balance([], 4) == []


def test_local_walk_skips_hidden_entries(tmp_path):
    (tmp_path / "a" / "_temporary").mkdir(parents=True)
    (tmp_path / "a" / ".cache").mkdir()
    shutil.copy(OOM, tmp_path / "a" / "job-1.log")
    shutil.copy(OOM, tmp_path / "a" / "_temporary" / "job-2.log")
    shutil.copy(OOM, tmp_path / "a" / ".cache" / "job-3.log")
    shutil.copy(OOM, tmp_path / "a" / ".job-4.log")
    shutil.copy(CLEAN, tmp_path / "b.log")
    found = spark_triage.list_local(str(tmp_path))
    assert found == [
        (str(tmp_path / "a" / "job-1.log"), OOM.stat().st_size),
        (str(tmp_path / "b.log"), CLEAN.stat().st_size),
    ]
    assert spark_triage.list_local(str(tmp_path / "*.log")) == [(str(tmp_path / "b.log"), CLEAN.stat().st_size)]
    assert spark_triage.list_local(str(tmp_path / "nowhere")) == []


def test_local_paths_and_uris():
    assert spark_triage.local_path("/data/x.log") == "/data/x.log"
    assert spark_triage.local_path("file:/data/a%20b.log") == "/data/a b.log"
    assert spark_triage.local_path("file:///data/x.log") == "/data/x.log"
    assert spark_triage.local_path("hdfs://nn:8020/x.log") is None
    assert spark_triage.local_path("s3a://bucket/x.log") is None


def need_fsspec():
    try:
        import fsspec
    except ImportError:
        if os.environ.get("CUDNNLOG_REQUIRE_SPARK"):
            pytest.fail("fsspec is not installed")
        pytest.skip("fsspec is not installed")
    return fsspec


def test_remote_file_is_streamed_in_bounded_chunks(monkeypatch):
    """A remote URI (fsspec's in-memory store stands for S3 or HDFS) is
    read by the package in chunks of at most 1 MiB, and gives the verdict
    the file gives on disk."""
    fsspec = need_fsspec()
    from fsspec.implementations.memory import MemoryFile

    fs = fsspec.filesystem("memory")
    fs.pipe("/logs/job-1.log", OOM.read_bytes())
    fs.pipe("/logs/job-2.log.gz", gzip.compress(ASSERT.read_bytes()))
    asked = []
    read = MemoryFile.read

    def recording(self, n=-1):
        asked.append(n)
        return read(self, n)

    monkeypatch.setattr(MemoryFile, "read", recording)
    scanner = cudnnlog.Scanner()
    try:
        oom = spark_triage.verdict_of(scanner, "memory://logs/job-1.log")
        assertion = spark_triage.verdict_of(scanner, "memory://logs/job-2.log.gz")
    finally:
        fs.rm("/logs", recursive=True)
    assert oom == cudnnlog.verdict(OOM.read_bytes(), path="memory://logs/job-1.log")
    assert assertion["primary"] == "cuda.device_assert"
    assert assertion["fingerprint"] == cudnnlog.verdict(ASSERT)["fingerprint"]
    assert asked and all(0 < n <= 1 << 20 for n in asked)


def test_missing_remote_file_is_an_unreadable_verdict():
    need_fsspec()
    v = spark_triage.verdict_of(cudnnlog.Scanner(), "memory://nowhere/job.log")
    assert "outcome" not in v and v["error"].startswith("memory://nowhere/job.log")
    # The same keys as the package's verdict of a file it cannot read.
    assert v.keys() == cudnnlog.verdict("/nonexistent/job.log").keys()
    # The summary counts it as unreadable, like the package's own.
    summary = cudnnlog.summarize([v, cudnnlog.verdict(OOM)])
    assert (summary["jobs"], summary["unreadable"], summary["failed"]) == (2, 1, 1)


def test_without_fsspec_or_pyarrow_the_error_says_what_to_install(monkeypatch):
    for name in ("fsspec", "pyarrow", "pyarrow.fs"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises
    v = spark_triage.verdict_of(cudnnlog.Scanner(), "s3a://bucket/job.log")
    assert "outcome" not in v
    assert "needs fsspec" in v["error"] and "pyarrow" in v["error"] and "s3a://" in v["error"]
