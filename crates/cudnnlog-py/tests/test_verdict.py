"""cudnnlog.verdict: one job's verdict from its report, file or bytes."""

import pytest

import cudnnlog
from conftest import ASSERT, CLEAN, OOM

KEYS = {"path", "sources", "outcome", "primary", "title", "message", "first", "cause", "remediation", "fingerprint", "findings"}


def test_verdict_of_a_file():
    v = cudnnlog.verdict(OOM)
    assert KEYS <= set(v)
    assert v["path"] == str(OOM) and v["sources"] == [str(OOM)]
    assert (v["outcome"], v["primary"]) == ("failed", "cuda.oom")
    assert v["title"] == "GPU out of memory"
    assert "CUDA out of memory" in v["message"]
    assert v["first"]["path"] == str(OOM) and v["first"]["line"] > 0
    assert 0 < v["cause"]["confidence"] <= 1
    assert len(v["fingerprint"]) == 16
    assert v["findings"] >= 1 and "error" not in v


def test_verdict_of_report_bytes_and_file_agree():
    from_file = cudnnlog.verdict(OOM)
    assert cudnnlog.verdict(cudnnlog.scan(OOM)) == from_file
    assert cudnnlog.verdict(OOM.read_bytes(), path=str(OOM)) == from_file
    assert cudnnlog.Scanner().verdict(OOM) == from_file


def test_verdict_of_bytes_is_named_by_path():
    v = cudnnlog.verdict(ASSERT.read_bytes(), path="hdfs://nn/logs/job-3.log")
    assert v["path"] == "hdfs://nn/logs/job-3.log"
    assert v["sources"] == ["hdfs://nn/logs/job-3.log"]
    assert v["first"]["path"] == "hdfs://nn/logs/job-3.log"
    assert v["primary"] == "cuda.device_assert"
    assert cudnnlog.verdict(ASSERT.read_bytes())["path"] == "<memory>"


def test_verdict_of_a_clean_log():
    v = cudnnlog.verdict(CLEAN)
    assert (v["outcome"], v["primary"], v["findings"]) == ("clean", None, 0)
    assert "fingerprint" not in v


def test_unreadable_input_gives_an_error_verdict(tmp_path):
    missing = tmp_path / "gone.log"
    v = cudnnlog.verdict(missing)
    assert "outcome" not in v and v["primary"] is None
    assert str(missing) in v["error"]
    bad = cudnnlog.verdict(b"\x1f\x8b\x08\x00 not gzip", path="x.log.gz")
    assert bad["path"] == "x.log.gz" and "error" in bad


def test_malformed_report_raises():
    with pytest.raises(ValueError, match="report"):
        cudnnlog.verdict({"schema": "cudnnlog.report/1"})
    with pytest.raises(TypeError):
        cudnnlog.verdict(3)
