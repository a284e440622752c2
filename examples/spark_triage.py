#!/usr/bin/env python3
"""Triage a fleet of training logs with PySpark and cudnnlog.

    spark-submit examples/spark_triage.py INPUT OUTPUT [options]
    python examples/spark_triage.py INPUT OUTPUT [options]   # a local Spark

INPUT is a file, a directory (walked recursively), a glob, or a
comma-separated list of them: local paths, or URIs of any
Hadoop-compatible store (``file://``, ``hdfs://``, ``s3a://``, ``gs://``,
``abfss://``...).

How it runs:

- The driver lists the files with their sizes: URIs through the Hadoop
  FileSystem of the Spark session's JVM (with its configuration), local
  paths by walking the driver's disk. Files and directories whose name
  starts with ``.`` or ``_`` are skipped (Hadoop's rule).
- The files are spread over N partitions (``--partitions``, default the
  default parallelism), balanced by size: largest first, each onto the
  partition with the fewest bytes so far, so one 40 GiB log does not share
  its task with a thousand others.
- Each task streams its files; no file is ever held whole in memory (nor
  in a JVM byte array, whose limit is 2 GiB): a local file (a plain path or
  ``file:``) is scanned by the package from its path, window by window; a
  remote one is opened with ``fsspec`` (``s3a://`` read as ``s3://``) or,
  without it, ``pyarrow.fs``, and fed to the package in chunks of at most
  1 MiB. gzip and zstd files are decompressed as they stream.

Each file is one job (rank files of one job, ``rank0.log`` and
``rank1.log``, are separate verdicts here, while ``cudnnlog.triage`` on one
machine groups them). Written to OUTPUT (on the same kind of store):

- ``OUTPUT/verdicts/part-*``: one JSON verdict per line, one per file (the
  package's verdict dict).
- ``OUTPUT/rows/``: the verdicts as a Parquet table, one row per job:
  ``path``, ``bytes``, ``outcome``, ``primary``, ``line``, ``title``,
  ``culprit`` (the ranks at fault, ``"1"``, ``"0,3"``), ``action``,
  ``fingerprint``, ``error``.
- ``OUTPUT/summary.json``: the fleet summary (cudnnlog's ``Summary``:
  ``jobs``, ``failed``, ``degraded``, ``clean``, ``unreadable``,
  ``by_primary``, ``by_action``, ``by_fingerprint``, ``groups``).

A file that cannot be read or decompressed gives a verdict with ``error``
set; it does not fail the job. In local mode (``--master local[...]``) the
Python workers run this interpreter (``sys.executable``) unless
``PYSPARK_PYTHON`` or ``spark.pyspark.python`` says otherwise, so a
virtual environment's python works without activating it.
"""

import argparse
import glob
import heapq
import json
import os
import re
import sys
from urllib.parse import unquote, urlparse

#: The columns of ``OUTPUT/rows``, all strings but ``bytes`` and ``line``.
ROW_FIELDS = ("path", "bytes", "outcome", "primary", "line", "title", "culprit", "action", "fingerprint", "error")

#: A URI's scheme (two letters at least, so that ``C:\\`` is a path).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Triage training logs with PySpark and cudnnlog.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="file, directory, glob, or comma-separated list of them")
    p.add_argument("output", metavar="OUTPUT", help="directory to write verdicts/, rows/ and summary.json to")
    p.add_argument(
        "--patterns",
        action="append",
        default=[],
        metavar="DIR",
        help="extra pattern directory, a local path present on every executor (repeatable)",
    )
    p.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="N",
        help="number of partitions to balance the files onto (default: the default parallelism)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUTPUT/verdicts, OUTPUT/rows and OUTPUT/summary.json if they exist",
    )
    return p.parse_args(argv)


# --- The driver: listing and balancing ---------------------------------


def scheme(path):
    """A path's URI scheme, lower case, or None for a plain path."""
    m = _SCHEME.match(path)
    return m.group(1).lower() if m else None


def hidden(name):
    """Hadoop's rule: names starting with ``.`` or ``_`` are not input."""
    return name.startswith((".", "_"))


def list_local(pattern):
    """The files (path, size) a local path or glob names, directories
    walked recursively (sorted), hidden entries skipped."""
    found = []
    for top in sorted(glob.glob(pattern)) or ([pattern] if os.path.exists(pattern) else []):
        top = os.path.abspath(top)
        if os.path.isfile(top):
            found.append((top, os.path.getsize(top)))
            continue
        below = []
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if not hidden(d)]
            for name in files:
                path = os.path.join(root, name)
                if not hidden(name) and os.path.isfile(path):
                    below.append((path, os.path.getsize(path)))
        found += sorted(below)
    return found


def list_hadoop(sc, pattern):
    """The files (URI, size) a URI or glob names on a Hadoop-compatible
    store, through the JVM's FileSystem; directories walked recursively,
    hidden entries skipped."""
    hpath, fs = _fs_path(sc, pattern)
    statuses = fs.globStatus(hpath) or []
    found = []
    stack = sorted(statuses, key=lambda s: s.getPath().toString(), reverse=True)
    while stack:
        status = stack.pop()
        if status.isDirectory():
            children = [c for c in fs.listStatus(status.getPath()) if not hidden(c.getPath().getName())]
            stack.extend(sorted(children, key=lambda s: s.getPath().toString(), reverse=True))
        elif status.isFile():
            found.append((status.getPath().toString(), status.getLen()))
    return found


def list_inputs(sc, spec):
    """Every file (path or URI, size) of the comma-separated ``spec``, each
    once. Raises FileNotFoundError for an entry that names nothing."""
    files, seen = [], set()
    for pattern in (p.strip() for p in spec.split(",")):
        if not pattern:
            continue
        found = list_local(pattern) if scheme(pattern) is None else list_hadoop(sc, pattern)
        if not found and not _empty_dir(sc, pattern):
            raise FileNotFoundError(f"{pattern}: no such file, directory or match")
        for path, size in found:
            if path not in seen:
                seen.add(path)
                files.append((path, size))
    return files


def _empty_dir(sc, pattern):
    """Whether ``pattern`` is a directory (with no log in it)."""
    if scheme(pattern) is None:
        return os.path.isdir(pattern)
    hpath, fs = _fs_path(sc, pattern)
    return fs.exists(hpath) and fs.getFileStatus(hpath).isDirectory()


def balance(files, n):
    """``files`` (path, size) spread over at most ``n`` lists with their
    byte totals as even as greedy gets: largest first, each onto the list
    with the fewest bytes so far (ties: the lowest index). Empty lists are
    dropped."""
    n = max(1, min(n, len(files)))
    buckets = [[] for _ in range(n)]
    heap = [(0, i) for i in range(n)]
    for path, size in sorted(files, key=lambda f: (-f[1], f[0])):
        total, i = heapq.heappop(heap)
        buckets[i].append((path, size))
        heapq.heappush(heap, (total + size, i))
    return [b for b in buckets if b]


# --- The executors: streaming each file --------------------------------


def local_path(path):
    """The local path of a plain path or a ``file:`` URI, else None."""
    s = scheme(path)
    if s is None:
        return path
    if s == "file":
        return unquote(urlparse(path).path)
    return None


def open_remote(uri):
    """A binary stream of a remote file: ``fsspec`` when installed
    (``s3a://`` and ``s3n://`` read as ``s3://``), else ``pyarrow.fs``;
    neither raises RuntimeError saying what to install. Read by the
    package in chunks of at most 1 MiB."""
    try:
        import fsspec
    except ImportError:
        fsspec = None
    if fsspec is not None:
        url = re.sub(r"^s3[an]://", "s3://", uri, flags=re.IGNORECASE)
        return fsspec.open(url, "rb", compression=None).open()
    try:
        from pyarrow import fs as pafs
    except ImportError:
        raise RuntimeError(
            f"{uri}: reading {scheme(uri)}:// files needs fsspec (with its filesystem: "
            "s3fs, gcsfs, adlfs...) or pyarrow installed where the executors run"
        ) from None
    filesystem, path = pafs.FileSystem.from_uri(re.sub(r"^s3[an]://", "s3://", uri, flags=re.IGNORECASE))
    return filesystem.open_input_stream(path, compression=None, buffer_size=1 << 20)


def unreadable(path, error):
    """The verdict of a file that cannot be read, as the package gives it."""
    return {"path": path, "sources": [path], "primary": None, "findings": 0, "error": error}


def verdict_of(scanner, path):
    """The verdict of one file, streamed: a local file from its path, a
    remote one from its stream. A file that cannot be opened gives a
    verdict with ``error`` set."""
    local = local_path(path)
    if local is not None:
        return scanner.verdict(local, path=path)
    try:
        stream = open_remote(path)
    except Exception as e:  # any store's error: the file is unreadable
        return unreadable(path, f"{path}: {e}")
    with stream:
        return scanner.verdict(stream, path=path)


def triage_partition(buckets, patterns):
    """The verdicts of one partition's files, as JSON lines. Runs on an
    executor: one scanner per partition (the built-in one is shared by
    every partition a Python worker runs)."""
    import cudnnlog

    scanner = cudnnlog.Scanner(patterns or None)
    for bucket in buckets:
        for path, _size in bucket:
            yield json.dumps(verdict_of(scanner, path))


def culprit_ranks(culprit):
    """The ranks at fault, comma-separated (``"1"``, ``"0,3"``), or None."""
    ranks = (culprit or {}).get("ranks") or []
    return ",".join(str(r) for r in ranks) or None


def to_row(verdict, sizes):
    """A verdict's row of ``OUTPUT/rows`` (see ``ROW_FIELDS``)."""
    first = verdict.get("first") or {}
    return (
        verdict["path"],
        sizes.get(verdict["path"]),
        verdict.get("outcome"),
        verdict.get("primary"),
        first.get("line"),
        verdict.get("title"),
        culprit_ranks(verdict.get("culprit")),
        verdict.get("action"),
        verdict.get("fingerprint"),
        verdict.get("error"),
    )


# --- Output on any store -------------------------------------------------


def _fs_path(sc, path):
    """A Hadoop Path and its FileSystem."""
    hpath = sc._jvm.org.apache.hadoop.fs.Path(path)
    return hpath, hpath.getFileSystem(sc._jsc.hadoopConfiguration())


def exists(sc, path):
    """Whether a file or directory exists on any Hadoop-compatible store."""
    hpath, fs = _fs_path(sc, path)
    return fs.exists(hpath)


def remove(sc, path):
    """Deletes a file or directory on any Hadoop-compatible store."""
    hpath, fs = _fs_path(sc, path)
    if fs.exists(hpath):
        fs.delete(hpath, True)


def write_text(sc, path, text):
    """Writes one file on any Hadoop-compatible store (open() on the
    driver would only reach local disks)."""
    hpath, fs = _fs_path(sc, path)
    stream = fs.create(hpath, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def use_this_interpreter(sc):
    """In local mode, the Python workers run this interpreter unless
    ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` names another: Spark's
    default, ``python3`` on the PATH, is not a virtual environment's python
    run by its path without activating it (the workers then cannot import
    cudnnlog). Returns the interpreter the workers run."""
    if not sc.master.startswith("local"):
        return sc.pythonExec
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if os.environ.get("PYSPARK_PYTHON") or sc.getConf().get("spark.pyspark.python"):
        return sc.pythonExec
    os.environ["PYSPARK_PYTHON"] = sys.executable
    sc.pythonExec = sys.executable
    return sc.pythonExec


def run(spark, input_paths, output, patterns=(), partitions=None, overwrite=False):
    """Triages the logs at ``input_paths`` into ``output``; returns the
    summary dict."""
    import cudnnlog
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    sc = spark.sparkContext
    output = output.rstrip("/")
    verdicts_dir, rows_dir, summary_path = output + "/verdicts", output + "/rows", output + "/summary.json"
    for path in (verdicts_dir, rows_dir, summary_path):
        if overwrite:
            remove(sc, path)
        elif exists(sc, path):
            raise FileExistsError(f"{path} exists (pass --overwrite to replace it)")

    files = list_inputs(sc, input_paths)
    buckets = balance(files, partitions or sc.defaultParallelism)
    patterns = list(patterns)
    # One bucket per partition: parallelize gives each slice one element.
    verdicts = sc.parallelize(buckets, max(1, len(buckets))).mapPartitions(
        lambda part: triage_partition(part, patterns)
    )
    verdicts.saveAsTextFile(verdicts_dir)

    # The rows and the summary are built from the verdicts just written
    # (no log is scanned twice); the summary on the driver, streamed a
    # partition at a time: it holds counts and groups, not the verdicts.
    sizes = sc.broadcast(dict(files))
    types = {"bytes": LongType(), "line": LongType()}
    schema = StructType([StructField(f, types.get(f, StringType()), f != "path") for f in ROW_FIELDS])
    rows = sc.textFile(verdicts_dir).map(lambda line: to_row(json.loads(line), sizes.value))
    spark.createDataFrame(rows, schema).write.parquet(rows_dir)
    lines = sc.textFile(verdicts_dir).toLocalIterator()
    summary = cudnnlog.summarize(json.loads(line) for line in lines)
    write_text(sc, summary_path, json.dumps(summary, indent=2) + "\n")
    return summary


def missing_local(spec):
    """The plain (local) paths of ``spec`` that name nothing: told before
    Spark starts."""
    entries = (p.strip() for p in spec.split(","))
    return [p for p in entries if p and scheme(p) is None and not (glob.glob(p) or os.path.exists(p))]


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    missing = missing_local(args.input)
    if missing:
        print(f"spark_triage: {missing[0]}: no such file, directory or match", file=sys.stderr)
        return 2
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("cudnnlog-triage").getOrCreate()
    use_this_interpreter(spark.sparkContext)
    try:
        summary = run(
            spark,
            args.input,
            args.output,
            patterns=args.patterns,
            partitions=args.partitions,
            overwrite=args.overwrite,
        )
    except (FileExistsError, FileNotFoundError) as e:
        print(f"spark_triage: {e}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(
        "{jobs} jobs: {failed} failed, {degraded} degraded, {clean} clean, "
        "{unreadable} unreadable; {n} distinct failures".format(n=len(summary["groups"]), **summary)
    )
    by_action = summary.get("by_action") or {}
    if by_action:
        print("  actions: " + ", ".join(f"{n} {a}" for a, n in sorted(by_action.items(), key=lambda x: (-x[1], x[0]))))
    for g in summary["groups"][:10]:
        print(f"  {g['count']:>6}  {g['class']:<28} {g['fingerprint']}  e.g. {g['examples'][0]}")
    out = args.output.rstrip("/")
    print(f"verdicts: {out}/verdicts, rows: {out}/rows, summary: {out}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
