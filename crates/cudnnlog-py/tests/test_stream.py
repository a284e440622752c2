"""cudnnlog.scan / verdict from a binary file-like object: a log read by
its ``read(n)`` in bounded chunks (a remote file, a pipe), never whole."""

import gzip
import io

import pytest

import cudnnlog
from conftest import ASSERT, OOM, training_log


class Recorder(io.RawIOBase):
    """A binary stream over ``data`` that records the sizes asked of it and
    gives at most ``most`` bytes a call (a network stream's short reads)."""

    def __init__(self, data, most=None):
        self.data = memoryview(data)
        self.at = 0
        self.asked = []
        self.most = most

    def readable(self):
        return True

    def read(self, n=-1):
        self.asked.append(n)
        if n is None or n < 0:
            n = len(self.data) - self.at
        n = min(n, self.most or n)
        out = bytes(self.data[self.at : self.at + n])
        self.at += len(out)
        return out


def test_stream_gives_the_report_of_the_file():
    with open(OOM, "rb") as f:
        report = cudnnlog.scan(f, name="hdfs://nn/logs/job-1.log")
    from_path = cudnnlog.scan(OOM)
    assert report["primary"] == "cuda.oom"
    assert report["sources"][0]["path"] == "hdfs://nn/logs/job-1.log"
    report["sources"][0]["path"] = str(OOM)
    assert report == from_path


def test_stream_without_a_name_is_named_stream():
    report = cudnnlog.scan(io.BytesIO(ASSERT.read_bytes()))
    assert report["sources"][0]["path"] == "<stream>"
    assert report["primary"] == "cuda.device_assert"


def test_stream_reads_in_bounded_chunks_and_short_reads_are_fine():
    # 24 MiB of progress lines, then the OOM: read in short reads of at
    # most 64 KiB, and never asked for more than 1 MiB at a time.
    log = training_log(24 << 20)
    stream = Recorder(log, most=64 << 10)
    verdict = cudnnlog.Scanner().verdict(stream, path="s3a://b/long.log")
    assert verdict["primary"] == "cuda.oom" and verdict["path"] == "s3a://b/long.log"
    assert stream.at == len(log), "read to the end"
    assert all(0 < n <= 1 << 20 for n in stream.asked), max(stream.asked)
    assert len(stream.asked) >= len(log) // (64 << 10)
    # The line of the OOM is where it is in the whole log.
    assert verdict["first"] == cudnnlog.verdict(log, path="s3a://b/long.log")["first"]


def test_stream_of_gzip_is_decompressed():
    data = gzip.compress(OOM.read_bytes())
    verdict = cudnnlog.verdict(Recorder(data, most=4096), path="gs://b/job.log.gz")
    assert verdict["primary"] == "cuda.oom"
    assert verdict["fingerprint"] == cudnnlog.verdict(OOM)["fingerprint"]


def test_stream_that_raises_gives_an_unreadable_verdict():
    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def read(self, n=-1):
            raise OSError("connection reset by peer")

    verdict = cudnnlog.verdict(Broken(), path="s3a://b/gone.log")
    assert "outcome" not in verdict
    assert "connection reset by peer" in verdict["error"]
    with pytest.raises(cudnnlog.CudnnlogError, match="connection reset by peer"):
        cudnnlog.scan(Broken())


def test_text_mode_stream_is_an_error_saying_so():
    with open(OOM, encoding="utf-8") as f:
        with pytest.raises(cudnnlog.CudnnlogError, match="binary mode"):
            cudnnlog.scan(f)


def test_stream_that_fails_part_way_is_unreadable():
    class Cut(Recorder):
        def read(self, n=-1):
            if self.at >= len(self.data):
                raise OSError("timed out")
            return super().read(n)

    verdict = cudnnlog.verdict(Cut(OOM.read_bytes(), most=1000), path="hdfs://nn/cut.log")
    assert "timed out" in verdict["error"]
