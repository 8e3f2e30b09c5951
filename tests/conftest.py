"""Shared test settings: offline, headless, and the chapters under test."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The venv's bin/ must be on PATH: nbgrader shells out to `alembic`.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
os.environ.pop("NBGRADER_EXECUTION", None)
# The test processes (`make test` runs three) share two cores, and each starts kernels and sandboxed workers running torch. With
# torch's default of one OpenMP thread per core, they oversubscribe the CPU and OpenMP's spinning threads
# slow everything: Chapter 4 run twice at once took 78 s each with the default and 23 s each with one
# thread (alone: 18 s). One thread per process (`make test` sets it too; the sandbox passes it on).
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# course.ddp starts its ranks from a forkserver or by spawn, never by fork (torch refuses a backward in a forked
# child once its parent has run one). tests/test_ddp.py still runs in a fresh process of its own
# (tests/test_ddp_process.py): its forkserver preloads course.ddp once, and a pytest worker's earlier tests
# (COURSE_DDP_START_METHOD, a monkeypatched module) must not decide how its ranks start.
collect_ignore = [] if os.environ.get("COURSE_DDP_PROCESS") else ["test_ddp.py"]

CHAPTERS = sorted(p.name for p in (REPO / "source").iterdir() if p.is_dir() and not p.name.startswith("."))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # A run that collects nothing must fail loudly (pytest's exit code 5),
    # and so must one that silently lost the chapter tests.
    if session.testscollected == 0:
        session.exitstatus = 5
