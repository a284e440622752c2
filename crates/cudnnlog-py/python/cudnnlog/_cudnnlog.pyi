"""Type stubs for the ``cudnnlog._cudnnlog`` extension module."""

import os
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Optional, Protocol, Union, final

from typing_extensions import Self, TypeAlias

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

__version__: str
#: The ``schema`` of a report: ``"cudnnlog.report/1"``.
REPORT_SCHEMA: str

#: A path: ``str`` or ``os.PathLike``.
_StrPath: TypeAlias = Union[str, "os.PathLike[str]"]
#: A log held in memory.
_Buffer: TypeAlias = Union[bytes, bytearray, memoryview]

class _Readable(Protocol):
    """A binary file-like object: read by ``read(n)`` calls, ``n`` at most
    1 MiB, until it returns no bytes."""

    def read(self, n: int, /) -> Union[bytes, bytearray, memoryview]: ...

#: A log to scan: a path, the log in memory, or a binary stream.
_Log: TypeAlias = Union[_StrPath, _Buffer, _Readable]
#: One pattern directory, or several.
_Patterns: TypeAlias = Optional[Union[_StrPath, Iterable[_StrPath]]]
#: A report (schema ``cudnnlog.report/1``): keys ``schema``, ``sources``,
#: ``environment``, ``outcome``, ``primary``, ``findings``, and when
#: present ``action``, ``retryable_because``, ``cross_run`` and
#: ``unclassified``.
_Report: TypeAlias = dict[str, Any]
#: A verdict: keys ``path``, ``sources``, ``outcome``, ``primary``,
#: ``title``, ``message``, ``first``, ``culprit``, ``cause``,
#: ``remediation``, ``action`` (``retry``, ``stop`` or ``investigate``),
#: ``retryable_because``, ``fingerprint``, ``findings``, ``error`` (the
#: optional ones only when set).
_Verdict: TypeAlias = dict[str, Any]
#: A fleet summary: ``jobs``, ``failed``, ``degraded``, ``clean``,
#: ``unreadable``, ``by_primary``, ``by_action``, ``by_fingerprint``,
#: ``groups``.
_Summary: TypeAlias = dict[str, Any]

class CudnnlogError(Exception):
    """A log or a pattern catalog could not be read; the message names the
    file (and, for a catalog file, the field)."""

@final
class Scanner:
    """The built-in catalog plus the patterns in ``patterns``; build once,
    reuse for many logs. Thread-safe."""

    def __new__(cls, patterns: _Patterns = None) -> Self: ...
    @property
    def patterns(self) -> list[str]: ...
    def scan(self, path_or_bytes: _Log, *, name: Optional[str] = None) -> _Report: ...
    def verdict(self, source: Union[_Report, _Log], path: Optional[str] = None) -> _Verdict: ...
    def triage(self, paths: Union[_StrPath, Iterable[_StrPath]], group: bool = True) -> Triage: ...

@final
class Triage(Iterator[_Verdict]):
    """The verdicts of a fleet of jobs, yielded as each job is done."""

    @property
    def jobs(self) -> int:
        """How many verdicts it yields in all."""
    def __iter__(self) -> Self: ...
    def __next__(self) -> _Verdict: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def scan(
    path_or_bytes: _Log,
    patterns: _Patterns = None,
    *,
    name: Optional[str] = None,
) -> _Report:
    """The report of one log, as a dict."""

def verdict(
    source: Union[_Report, _Log],
    path: Optional[str] = None,
    patterns: _Patterns = None,
) -> _Verdict:
    """The verdict of one job, from its report, its file or its bytes."""

def triage(
    paths: Union[_StrPath, Iterable[_StrPath]],
    patterns: _Patterns = None,
    group: bool = True,
) -> Triage:
    """The verdict of every job, yielded as each is done."""

def summarize(verdicts: Iterable[_Verdict]) -> _Summary:
    """Verdicts counted by outcome, primary class and fingerprint."""

def _forked() -> None:
    """Forgets the parent's scanning threads in a forked child (called by
    ``os.register_at_fork``)."""
