"""cudnnlog reads deep-learning training logs and says what went wrong, why,
and what to do.

- ``scan(path_or_bytes)`` returns a log's JSON report (schema
  ``cudnnlog.report/1``) as a dict.
- ``verdict(report_or_log, path)`` returns one job's verdict: how it ended,
  the primary failure, the top cause, a fingerprint.
- ``triage(paths)`` yields the verdict of every job as soon as it is done,
  scanning on all cores.
- ``summarize(verdicts)`` groups verdicts by fingerprint.
- ``Scanner(patterns)`` does the same with extra pattern directories,
  built once and reused.

Every value is the dict of the JSON the ``cudnnlog`` command prints.
Scanning releases the GIL. Errors reading a log or a pattern catalog raise
``CudnnlogError``.
"""

from ._cudnnlog import (
    REPORT_SCHEMA,
    CudnnlogError,
    Scanner,
    Triage,
    __version__,
    scan,
    summarize,
    triage,
    verdict,
)

__all__ = [
    "REPORT_SCHEMA",
    "CudnnlogError",
    "Scanner",
    "Triage",
    "__version__",
    "scan",
    "summarize",
    "triage",
    "verdict",
]
