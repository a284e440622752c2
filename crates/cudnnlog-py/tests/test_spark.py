"""examples/spark_triage.py end to end on a local Spark (local[2]).

Skipped when PySpark or Java is missing, unless CUDNNLOG_REQUIRE_SPARK is
set (as .ci/python.sh sets it): then their absence fails the test.
"""

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ASSERT, CLEAN, OOM, REPO

EXAMPLE = REPO / "examples" / "spark_triage.py"


def spark_available():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "java is not installed"
    return None


@pytest.fixture(scope="module")
def spark_env():
    missing = spark_available()
    if missing:
        if os.environ.get("CUDNNLOG_REQUIRE_SPARK"):
            pytest.fail(missing)
        pytest.skip(missing)
    env = dict(os.environ)
    env.update(
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_SUBMIT_ARGS=(
            "--master local[2] --conf spark.ui.enabled=false "
            "--conf spark.ui.showConsoleProgress=false pyspark-shell"
        ),
    )
    return env


def test_spark_triage(tmp_path, spark_env):
    logs = tmp_path / "logs"
    (logs / "cluster-b").mkdir(parents=True)
    shutil.copy(OOM, logs / "job-1.log")
    shutil.copy(OOM, logs / "cluster-b" / "job-2.log")
    (logs / "cluster-b" / "job-3.log.gz").write_bytes(gzip.compress(OOM.read_bytes()))
    shutil.copy(CLEAN, logs / "job-4.log")
    (logs / ".job-5.log").write_bytes(OOM.read_bytes())  # hidden: skipped
    (logs / "job-7.log.gz").write_bytes(b"\x1f\x8b\x08\x00 not gzip")  # unreadable
    extra = tmp_path / "extra"
    extra.mkdir()
    shutil.copy(ASSERT, extra / "job-6.log")
    shutil.copy(CLEAN, extra / "notes.txt")  # not matched by the glob
    out = tmp_path / "out"

    # A directory (walked recursively) and a glob, comma-separated.
    inputs = f"{logs},{extra}/*.log"
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), inputs, str(out)],
        env=spark_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 jobs: 4 failed, 0 degraded, 1 clean, 1 unreadable" in run.stdout

    lines = []
    for part in sorted((out / "verdicts").glob("part-*")):
        lines += [json.loads(line) for line in part.read_text().splitlines() if line]
    names = sorted(v["path"].rsplit("/", 1)[-1] for v in lines)
    assert names == ["job-1.log", "job-2.log", "job-3.log.gz", "job-4.log", "job-6.log", "job-7.log.gz"]
    by_name = {v["path"].rsplit("/", 1)[-1]: v for v in lines}
    assert {by_name[n]["primary"] for n in ("job-1.log", "job-2.log", "job-3.log.gz")} == {"cuda.oom"}
    assert len({by_name[n]["fingerprint"] for n in ("job-1.log", "job-2.log", "job-3.log.gz")}) == 1
    assert by_name["job-4.log"]["outcome"] == "clean"
    assert by_name["job-6.log"]["primary"] == "cuda.device_assert"
    assert "outcome" not in by_name["job-7.log.gz"] and "job-7.log.gz" in by_name["job-7.log.gz"]["error"]
    assert all(v["sources"] == [v["path"]] for v in lines), "each file is its own job"

    summary = json.loads((out / "summary.json").read_text())
    assert (summary["jobs"], summary["failed"], summary["clean"], summary["unreadable"]) == (6, 4, 1, 1)
    assert summary["by_primary"] == {"cuda.oom": 3, "cuda.device_assert": 1}
    top = summary["groups"][0]
    assert (top["class"], top["count"]) == ("cuda.oom", 3)
    assert summary["by_fingerprint"][top["fingerprint"]] == 3
    assert sorted(e.rsplit("/", 1)[-1] for e in top["examples"]) == ["job-1.log", "job-2.log", "job-3.log.gz"]
    assert [g["count"] for g in summary["groups"]] == [3, 1]

    # The same verdicts as cudnnlog.summarize over them on one machine.
    import cudnnlog

    assert cudnnlog.summarize(lines) == summary
