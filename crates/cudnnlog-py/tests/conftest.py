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


def training_block():
    """About 1 MiB of a training run's progress lines (steps, losses,
    learning rates, the odd checkpoint), ending with a newline: no
    failure in it."""
    block = bytearray()
    step = 0
    while len(block) < 1 << 20:
        loss = 2.5 - (step % 5000) / 2500 + (step * 7919 % 1009) / 10000
        block += (
            f"2026-11-29 19:{step // 60 % 60:02d}:{step % 60:02d},{step % 1000:03d} INFO "
            f"train: epoch {step // 2000} step {step} loss {loss:.4f} lr 3.0e-04 "
            f"grad_norm {1 + step % 13 / 10:.2f} tokens/s {41000 + step % 977}\n"
        ).encode()
        if step % 500 == 499:
            block += f"INFO checkpoint: saved ckpt/step-{step}.pt (1.3 GiB)\n".encode()
        step += 1
    return bytes(block)


def training_log(size):
    """About ``size`` bytes of a training run's progress lines
    (``training_block``), then the OOM capture: a long log whose failure
    is at its very end."""
    block = training_block()
    tail = OOM.read_bytes()
    return block * max(1, (size - len(tail)) // len(block)) + tail


def fixture_log(size):
    """About ``size`` bytes of the real logs in ``fixtures/real`` one after
    another, again and again: a long log as dense in failures, warnings and
    tracebacks as they are (a few seconds a few hundred MiB on two
    cores)."""
    unit = b"".join(p.read_bytes() for p in sorted(REAL.glob("*.log")))
    return unit * max(1, size // len(unit))
