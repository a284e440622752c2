"""Shared paths and fixtures: the repository's real logs."""

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
REAL = REPO / "fixtures" / "real"

OOM = REAL / "h200-torch-oom-amp-train.log"
CLEAN = REAL / "h200-torch-healthy-train.log"
ASSERT = REAL / "h200-torch-device-assert.log"
NCCL_TIMEOUT = REAL / "h200x2-torchrun-nccl-watchdog-timeout.log"


@pytest.fixture
def fleet(tmp_path):
    """A directory of job logs copied from the real fixtures:

    - ``job-1.log``, ``job-2.log``: the same OOM in two jobs
    - ``clean.log``: a healthy run
    - ``assert.log``: a device-side assert
    - ``run-7/rank0.log``, ``run-7/rank1.log``: two ranks of one job
    - ``.hidden.log``: skipped when the directory is walked
    """
    d = tmp_path / "fleet"
    (d / "run-7").mkdir(parents=True)
    shutil.copy(OOM, d / "job-1.log")
    shutil.copy(OOM, d / "job-2.log")
    shutil.copy(CLEAN, d / "clean.log")
    shutil.copy(ASSERT, d / "assert.log")
    shutil.copy(NCCL_TIMEOUT, d / "run-7" / "rank0.log")
    shutil.copy(CLEAN, d / "run-7" / "rank1.log")
    (d / ".hidden.log").write_bytes(OOM.read_bytes())
    return d
