"""cudnnlog reads deep-learning training logs and says what went wrong, why,
and what to do.

- ``scan(path_or_bytes)`` returns a log's JSON report (schema
  ``cudnnlog.report/1``) as a dict; the log is a path, bytes, or a binary
  file-like object (read in chunks of at most 1 MiB).
- ``verdict(report_or_log, path)`` returns one job's verdict: how it ended,
  the primary failure, the top cause, a fingerprint.
- ``triage(paths)`` yields the verdict of every job as soon as it is done,
  scanning on all cores.
- ``summarize(verdicts)`` groups verdicts by fingerprint.
- ``Scanner(patterns)`` does the same with extra pattern directories,
  built once and reused.

Every value is the dict of the JSON the ``cudnnlog`` command prints.
Scanning releases the GIL, and Ctrl-C stops a scan (``KeyboardInterrupt``).
The package works in a process forked after it was used (``multiprocessing``
on Linux). Errors reading a log or a pattern catalog raise
``CudnnlogError``.
"""

import os as _os

from . import _cudnnlog
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

# A forked child has none of its parent's threads: it starts a pool of
# scanning threads of its own on its first call.
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_cudnnlog._forked)
