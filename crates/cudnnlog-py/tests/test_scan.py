"""cudnnlog.scan: a log (path or bytes) into its JSON report."""

import gzip
import json
import os
import pathlib

import pytest

import cudnnlog
from conftest import ASSERT, CLEAN, OOM, REAL, REPO


def test_scan_path_finds_the_oom():
    report = cudnnlog.scan(str(OOM))
    assert report["schema"] == "cudnnlog.report/1" == cudnnlog.REPORT_SCHEMA
    assert report["primary"] == "cuda.oom"
    assert report["outcome"] == "failed"
    assert report["sources"] == [{"path": str(OOM), "bytes": OOM.stat().st_size, "lines": 29}]
    oom = report["findings"][0]
    assert oom["class"] == "cuda.oom" and oom["severity"] == "error"


@pytest.mark.parametrize("log", sorted(REAL.glob("*.log")), ids=lambda p: p.stem)
def test_scan_gives_the_cli_report(log, monkeypatch):
    """The report is exactly what `cudnnlog scan --format json` writes (the
    golden files next to each log)."""
    monkeypatch.chdir(REPO)
    rel = log.relative_to(REPO).as_posix()
    expected = json.loads(log.with_suffix(".expected.json").read_text())
    assert cudnnlog.scan(rel) == expected


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview], ids=["bytes", "bytearray", "memoryview"])
def test_scan_bytes_is_the_same_report(wrap):
    from_path = cudnnlog.scan(OOM)
    from_bytes = cudnnlog.scan(wrap(OOM.read_bytes()))
    assert from_bytes["primary"] == "cuda.oom"
    assert from_bytes["sources"][0]["path"] == "<memory>"
    from_bytes["sources"][0]["path"] = str(OOM)
    assert from_bytes == from_path


def test_scan_names_the_source():
    report = cudnnlog.scan(OOM.read_bytes(), name="s3://bucket/job-9.log")
    assert report["sources"][0]["path"] == "s3://bucket/job-9.log"
    assert cudnnlog.scan(OOM, name="renamed.log")["sources"][0]["path"] == "renamed.log"


def test_scan_takes_pathlike():
    assert cudnnlog.scan(pathlib.Path(OOM))["primary"] == "cuda.oom"

    class Custom(os.PathLike):
        def __fspath__(self):
            return str(ASSERT)

    assert cudnnlog.scan(Custom())["primary"] == "cuda.device_assert"


def test_clean_log_is_clean():
    report = cudnnlog.scan(CLEAN)
    assert report["outcome"] == "clean"
    assert report["primary"] is None
    assert report["findings"] == []
    assert cudnnlog.scan(b"")["outcome"] == "clean"


def test_gzip_is_decompressed(tmp_path):
    packed = gzip.compress(OOM.read_bytes())
    assert cudnnlog.scan(packed)["primary"] == "cuda.oom"
    gz = tmp_path / "train.log.gz"
    gz.write_bytes(packed)
    assert cudnnlog.scan(gz)["primary"] == "cuda.oom"


def test_missing_file_raises_with_its_path(tmp_path):
    missing = tmp_path / "no-such-job.log"
    with pytest.raises(cudnnlog.CudnnlogError) as err:
        cudnnlog.scan(missing)
    assert str(missing) in str(err.value)
    assert "No such file" in str(err.value)
    assert issubclass(cudnnlog.CudnnlogError, Exception)


def test_directory_raises(tmp_path):
    with pytest.raises(cudnnlog.CudnnlogError, match="is a directory"):
        cudnnlog.scan(tmp_path)


def test_corrupt_gzip_raises():
    with pytest.raises(cudnnlog.CudnnlogError):
        cudnnlog.scan(b"\x1f\x8b\x08\x00 this is not gzip at all")


@pytest.mark.parametrize("bad", [42, None, 1.5, ["a.log"], {"path": "a.log"}])
def test_wrong_argument_types_raise_typeerror(bad):
    with pytest.raises(TypeError, match="expected a path"):
        cudnnlog.scan(bad)


PATTERN = """\
id = "test-frobnicator-meltdown"
class = "sched.cancelled"
severity = "error"
stability = "stable"
since = "0.2.0"
summary = "A pattern for the tests."
anchors = ["FROBNICATOR MELTDOWN"]
regex = '''FROBNICATOR MELTDOWN (?P<code>\\d+)'''
signature = []
remediations = ["Unfrobnicate."]
sources = ["the tests"]

[doc]
what = "A test."
why = "A test."

[[causes]]
id = "external_kill"
prior = 1.0

[[examples]]
log = '''
FROBNICATOR MELTDOWN 42
'''
[examples.facts]
code = "42"
"""

LOG = b"epoch 1 step 3 loss 2.1\nFROBNICATOR MELTDOWN 42\n"


def test_patterns_dir_adds_patterns(tmp_path):
    (tmp_path / "test-frobnicator-meltdown.toml").write_text(PATTERN)
    assert cudnnlog.scan(LOG)["primary"] is None
    for patterns in (tmp_path, str(tmp_path), [tmp_path]):
        report = cudnnlog.scan(LOG, patterns=patterns)
        assert report["primary"] == "sched.cancelled"
        assert report["findings"][0]["pattern"] == "test-frobnicator-meltdown"
    scanner = cudnnlog.Scanner(tmp_path)
    assert scanner.patterns == [str(tmp_path)]
    assert scanner.scan(LOG)["primary"] == "sched.cancelled"


def test_malformed_pattern_raises(tmp_path):
    (tmp_path / "broken.toml").write_text('id = "broken"\nclass = 3\n')
    with pytest.raises(cudnnlog.CudnnlogError, match="catalog file") as err:
        cudnnlog.scan(OOM, patterns=tmp_path)
    assert "broken.toml" in str(err.value)
    with pytest.raises(cudnnlog.CudnnlogError, match="catalog file"):
        cudnnlog.Scanner(tmp_path)


def test_missing_patterns_dir_raises(tmp_path):
    missing = tmp_path / "no-patterns"
    with pytest.raises(cudnnlog.CudnnlogError) as err:
        cudnnlog.scan(OOM, patterns=missing)
    assert str(missing) in str(err.value)
    with pytest.raises(TypeError):
        cudnnlog.scan(OOM, patterns=42)


def test_version():
    assert cudnnlog.__version__.count(".") == 2
