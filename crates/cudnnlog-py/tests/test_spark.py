"""examples/spark_triage.py end to end on a local Spark (local[2]): a
fleet of real logs, the interpreter of a virtual environment not
activated, and a 3 GiB log streamed past the JVM's 2 GiB array limit.

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

from conftest import ASSERT, CLEAN, NCCL_TIMEOUT, OOM, REPO

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


def run_example(args, env, timeout=300):
    """Runs the example with this interpreter; its completed process."""
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def read_verdicts(out):
    """The verdicts in ``out/verdicts``, by file name."""
    lines = []
    for part in sorted((out / "verdicts").glob("part-*")):
        lines += [json.loads(line) for line in part.read_text().splitlines() if line]
    return lines


def test_spark_triage(tmp_path, spark_env):
    logs = tmp_path / "logs"
    (logs / "cluster-b").mkdir(parents=True)
    shutil.copy(OOM, logs / "job-1.log")
    shutil.copy(OOM, logs / "cluster-b" / "job-2.log")
    (logs / "cluster-b" / "job-3.log.gz").write_bytes(gzip.compress(OOM.read_bytes()))
    shutil.copy(CLEAN, logs / "job-4.log")
    (logs / ".job-5.log").write_bytes(OOM.read_bytes())  # hidden: skipped
    (logs / "job-7.log.gz").write_bytes(b"\x1f\x8b\x08\x00 not gzip")  # corrupt
    extra = tmp_path / "extra"
    extra.mkdir()
    shutil.copy(ASSERT, extra / "job-6.log")
    shutil.copy(CLEAN, extra / "notes.txt")  # not matched by the glob
    out = tmp_path / "out"

    # A directory (walked recursively) and a glob, comma-separated.
    inputs = f"{logs},{extra}/*.log"
    run = run_example([inputs, out], spark_env)
    assert run.returncode == 0, run.stdout + run.stderr
    # The corrupt gzip file is judged on what could be read (one line),
    # its error saying where reading stopped, as `cudnnlog scan` does.
    assert "6 jobs: 4 failed, 0 degraded, 2 clean, 0 unreadable" in run.stdout

    lines = read_verdicts(out)
    names = sorted(v["path"].rsplit("/", 1)[-1] for v in lines)
    assert names == ["job-1.log", "job-2.log", "job-3.log.gz", "job-4.log", "job-6.log", "job-7.log.gz"]
    by_name = {v["path"].rsplit("/", 1)[-1]: v for v in lines}
    assert {by_name[n]["primary"] for n in ("job-1.log", "job-2.log", "job-3.log.gz")} == {"cuda.oom"}
    assert len({by_name[n]["fingerprint"] for n in ("job-1.log", "job-2.log", "job-3.log.gz")}) == 1
    assert by_name["job-4.log"]["outcome"] == "clean"
    assert by_name["job-6.log"]["primary"] == "cuda.device_assert"
    corrupt = by_name["job-7.log.gz"]
    assert "job-7.log.gz: corrupt or truncated gzip data" in corrupt["error"] and not corrupt["primary"]
    assert all(v["sources"] == [v["path"]] for v in lines), "each file is its own job"

    import cudnnlog

    # Each verdict is the package's verdict of that file on one machine.
    for v in lines:
        assert v == cudnnlog.verdict(v["path"]), v["path"]

    summary = json.loads((out / "summary.json").read_text())
    assert (summary["jobs"], summary["failed"], summary["clean"], summary["unreadable"]) == (6, 4, 2, 0)
    assert summary["by_primary"] == {"cuda.oom": 3, "cuda.device_assert": 1}
    assert sum(summary["by_action"].values()) == 4
    actions = next(line for line in run.stdout.splitlines() if line.startswith("  actions: "))
    assert all(f"{n} {a}" in actions for a, n in summary["by_action"].items()), actions
    top = summary["groups"][0]
    assert (top["class"], top["count"]) == ("cuda.oom", 3)
    assert summary["by_fingerprint"][top["fingerprint"]] == 3
    assert sorted(e.rsplit("/", 1)[-1] for e in top["examples"]) == ["job-1.log", "job-2.log", "job-3.log.gz"]
    assert [g["count"] for g in summary["groups"]] == [3, 1]

    # The same verdicts as cudnnlog.summarize over them on one machine.
    assert cudnnlog.summarize(lines) == summary


@pytest.fixture(scope="module")
def spark(spark_env):
    """A local Spark session in this process (to read the rows written,
    and to list files through the JVM's FileSystem)."""
    from pyspark.sql import SparkSession

    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_LOCAL_IP"):
        os.environ.setdefault(var, spark_env[var])
    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .appName("cudnnlog-tests")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_rows_are_the_verdicts(tmp_path, spark_env, spark):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(OOM, logs / "job-1.log")
    shutil.copy(CLEAN, logs / "job-2.log")
    (logs / "job-3.log.gz").write_bytes(b"\x1f\x8b\x08\x00 not gzip")
    shutil.copy(NCCL_TIMEOUT, logs / "job-4.log")
    out = tmp_path / "out"
    # A file: URI goes through the JVM's FileSystem.
    run = run_example([f"file://{logs}", out, "--partitions", "3"], spark_env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 jobs: 2 failed, 0 degraded, 2 clean, 0 unreadable" in run.stdout
    verdicts = {v["path"]: v for v in read_verdicts(out)}
    names = ["job-1.log", "job-2.log", "job-3.log.gz", "job-4.log"]
    assert sorted(p.rsplit("/", 1)[-1] for p in verdicts) == names
    assert all(p.startswith("file:/") for p in verdicts)
    rows = {r["path"]: r.asDict() for r in spark.read.parquet(str(out / "rows")).collect()}
    assert rows.keys() == verdicts.keys()
    for path, row in rows.items():
        v = verdicts[path]
        name = path.rsplit("/", 1)[-1]
        assert row["bytes"] == (logs / name).stat().st_size
        assert (row["outcome"], row["primary"], row["fingerprint"]) == (
            v.get("outcome"),
            v.get("primary"),
            v.get("fingerprint"),
        )
        assert row["action"] == v.get("action")
        assert row["line"] == (v.get("first") or {}).get("line")
    import cudnnlog

    oom = rows[next(p for p in rows if p.endswith("job-1.log"))]
    assert oom["primary"] == "cuda.oom" and oom["line"] == cudnnlog.verdict(OOM)["first"]["line"]
    assert rows[next(p for p in rows if p.endswith("job-3.log.gz"))]["error"]
    # What to do with each failed job (retry, stop, investigate), as its
    # verdict says; none for a clean one.
    assert oom["action"] == cudnnlog.verdict(OOM)["action"] and oom["action"] in ("retry", "stop", "investigate")
    assert rows[next(p for p in rows if p.endswith("job-2.log"))]["action"] is None
    nccl = rows[next(p for p in rows if p.endswith("job-4.log"))]
    assert nccl["action"] == cudnnlog.verdict(NCCL_TIMEOUT)["action"] is not None
    assert nccl["culprit"] == ",".join(map(str, verdicts[nccl["path"]]["culprit"]["ranks"])) == "1"
    assert [r["culprit"] for p, r in rows.items() if not p.endswith("job-4.log")] == [None] * 3

    # Output is not overwritten unless asked; a missing input is an error.
    again = run_example([f"file://{logs}", out], spark_env)
    assert again.returncode == 2 and "exists" in again.stderr
    missing = run_example([f"{logs},{tmp_path}/nowhere", tmp_path / "out2"], spark_env)
    assert missing.returncode == 2 and "nowhere: no such file" in missing.stderr
    missing = run_example([f"file://{tmp_path}/nowhere/*.log", tmp_path / "out2"], spark_env)
    assert missing.returncode == 2 and "nowhere/*.log: no such file" in missing.stderr


def test_workers_run_the_interpreter_that_runs_the_example(tmp_path, spark_env):
    """Run by a virtual environment's python by its path, without the
    environment activated: Spark's workers would run ``python3`` from the
    PATH, which cannot import cudnnlog, unless the example points them at
    its own interpreter."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(OOM, logs / "job-1.log")
    shutil.copy(ASSERT, logs / "job-2.log")
    venv_bin = os.path.dirname(sys.executable)
    env = {k: v for k, v in spark_env.items() if k not in ("VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if d and d != venv_bin)
    env.pop("PYTHONPATH", None)
    run = run_example([logs, tmp_path / "out"], env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 jobs: 2 failed" in run.stdout
    primaries = sorted(v["primary"] for v in read_verdicts(tmp_path / "out"))
    assert primaries == ["cuda.device_assert", "cuda.oom"]


def proc_tree(root):
    """The process ids under ``root`` (itself included)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def peak_rss(pid):
    """A process's kind (``java`` or ``python worker``) and peak resident
    memory in bytes (VmHWM), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        with open(f"/proc/{pid}/status") as f:
            hwm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None
    if "pyspark.daemon" in cmd or "pyspark.worker" in cmd:
        return "python worker", hwm
    if "java" in cmd.split(" ", 1)[0]:
        return "java", hwm
    return None


def test_a_3_gib_log_streams_in_bounded_memory(tmp_path, spark_env):
    """A 3 GiB log (past the 2 GiB a JVM byte array holds, which is what
    ``binaryFiles`` read whole) beside small real logs: its verdict names
    the OOM at its very end, at its line, while each Python worker stays
    far below the file's size."""
    import threading
    import time

    import cudnnlog
    from conftest import training_block

    logs = tmp_path / "logs"
    logs.mkdir()
    big = logs / "big-job.log"
    block, tail = training_block(), OOM.read_bytes()
    reps = ((3 << 30) - len(tail)) // len(block) + 1
    tail_line = cudnnlog.verdict(OOM)["first"]["line"]
    try:
        start = time.monotonic()
        with open(big, "wb") as f:
            for _ in range(reps):
                f.write(block)
            f.write(tail)
        generated = time.monotonic() - start
        size = big.stat().st_size
        assert size > 3 << 30
        shutil.copy(ASSERT, logs / "job-2.log")
        shutil.copy(CLEAN, logs / "job-3.log")

        peaks, done = {}, threading.Event()
        proc = subprocess.Popen(
            [sys.executable, str(EXAMPLE), str(logs), str(tmp_path / "out")],
            env=spark_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def watch():
            while not done.is_set():
                for pid in proc_tree(proc.pid):
                    seen = peak_rss(pid)
                    if seen:
                        peaks[seen[0]] = max(peaks.get(seen[0], 0), seen[1])
                done.wait(0.2)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        start = time.monotonic()
        try:
            stdout, stderr = proc.communicate(timeout=900)
        finally:
            done.set()
            watcher.join()
            if proc.poll() is None:
                proc.kill()
        scanned = time.monotonic() - start
        assert proc.returncode == 0, stdout + stderr
        assert "3 jobs: 2 failed, 0 degraded, 1 clean, 0 unreadable" in stdout
    finally:
        big.unlink(missing_ok=True)

    verdicts = {v["path"].rsplit("/", 1)[-1]: v for v in read_verdicts(tmp_path / "out")}
    v = verdicts["big-job.log"]
    assert v["outcome"] == "failed" and v["primary"] == "cuda.oom"
    assert v["action"] == cudnnlog.verdict(OOM)["action"]
    lines_before = reps * block.count(b"\n")
    assert v["first"]["line"] == lines_before + tail_line
    assert verdicts["job-2.log"]["primary"] == "cuda.device_assert"
    assert verdicts["job-3.log"]["outcome"] == "clean"
    worker = peaks.get("python worker", 0)
    print(
        f"\n3 GiB log: {size / 2**30:.2f} GiB written in {generated:.1f} s; "
        f"Spark run (start, scan, write) {scanned:.1f} s; "
        f"peak RSS: python worker {worker / 2**20:.0f} MiB, "
        f"JVM {peaks.get('java', 0) / 2**20:.0f} MiB"
    )
    assert 0 < worker < 1 << 30, f"a python worker's peak RSS was {worker / 2**20:.0f} MiB"
