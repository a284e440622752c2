#!/usr/bin/env python3
"""Triage a fleet of training logs with PySpark and cudnnlog.

    spark-submit examples/spark_triage.py INPUT OUTPUT [options]

INPUT is a directory (walked recursively), a glob, or a comma-separated
list of them, on any Hadoop-compatible store (a local path, file://,
hdfs://, s3a://, gs://, abfss://...). The executors read each file's
bytes (``binaryFiles``), so the logs need not be on their disks, and
scan them with the ``cudnnlog`` Python package, which must be installed
where the executors run (see docs/python.md).

Written to OUTPUT (on the same kind of store):

- ``OUTPUT/verdicts/part-*``: one JSON verdict per line, one per file. In
  this route each file is its own job: rank files of one job
  (``rank0.log``, ``rank1.log``) are separate verdicts here, while
  ``cudnnlog.triage`` on one machine groups them into one.
- ``OUTPUT/summary.json``: the fleet summary (the fields of cudnnlog's
  ``Summary``: ``jobs``, ``failed``, ``degraded``, ``clean``,
  ``unreadable``, ``by_primary``, ``by_fingerprint``, and ``groups``, one
  per fingerprint, largest first, with up to five example jobs).

A file that cannot be read or decompressed gives a verdict with ``error``
set; it does not fail the job. Files whose name starts with ``.`` or
``_`` are skipped (Hadoop's rule). Each file is read into memory whole, so
a single file must fit in an executor (and be under 2 GiB).
"""

import argparse
import json
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Triage training logs with PySpark and cudnnlog.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="directory, glob, or comma-separated list of them")
    p.add_argument("output", metavar="OUTPUT", help="directory to write verdicts/ and summary.json to")
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
        help="minimum number of partitions to read the input in (default: the default parallelism)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUTPUT/verdicts and OUTPUT/summary.json if they exist",
    )
    return p.parse_args(argv)


def triage_partition(files, patterns):
    """The verdicts of one partition's files, as JSON lines. Runs on an
    executor: one scanner per partition (the built-in one is shared by
    every partition a Python worker runs)."""
    import cudnnlog

    scanner = cudnnlog.Scanner(patterns or None)
    for path, content in files:
        yield json.dumps(scanner.verdict(content, path=path))


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


def run(spark, input_paths, output, patterns=(), partitions=None, overwrite=False):
    """Triages the logs at ``input_paths`` into ``output``; returns the
    summary dict."""
    import cudnnlog

    sc = spark.sparkContext
    # Directories are walked recursively.
    sc._jsc.hadoopConfiguration().set("mapreduce.input.fileinputformat.input.dir.recursive", "true")
    output = output.rstrip("/")
    verdicts_dir = output + "/verdicts"
    summary_path = output + "/summary.json"
    for path in (verdicts_dir, summary_path):
        if overwrite:
            remove(sc, path)
        elif exists(sc, path):
            raise FileExistsError(f"{path} exists (pass --overwrite to replace it)")

    patterns = list(patterns)
    files = sc.binaryFiles(input_paths, minPartitions=partitions or sc.defaultParallelism)
    verdicts = files.mapPartitions(lambda part: triage_partition(part, patterns))
    verdicts.saveAsTextFile(verdicts_dir)

    # The summary is built on the driver from the verdicts just written (so
    # no log is scanned twice), streamed a partition at a time: it holds
    # counts and groups, not the verdicts.
    lines = sc.textFile(verdicts_dir).toLocalIterator()
    summary = cudnnlog.summarize(json.loads(line) for line in lines)
    write_text(sc, summary_path, json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("cudnnlog-triage").getOrCreate()
    try:
        summary = run(
            spark,
            args.input,
            args.output,
            patterns=args.patterns,
            partitions=args.partitions,
            overwrite=args.overwrite,
        )
    except FileExistsError as e:
        print(f"spark_triage: {e}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(
        "{jobs} jobs: {failed} failed, {degraded} degraded, {clean} clean, "
        "{unreadable} unreadable; {n} distinct failures".format(n=len(summary["groups"]), **summary)
    )
    for g in summary["groups"][:10]:
        print(f"  {g['count']:>6}  {g['class']:<28} {g['fingerprint']}  e.g. {g['examples'][0]}")
    print(f"verdicts: {args.output.rstrip('/')}/verdicts, summary: {args.output.rstrip('/')}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
