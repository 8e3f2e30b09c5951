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

CHAPTERS = sorted(p.name for p in (REPO / "source").iterdir() if p.is_dir() and not p.name.startswith("."))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # A run that collects nothing must fail loudly (pytest's exit code 5),
    # and so must one that silently lost the chapter tests.
    if session.testscollected == 0:
        session.exitstatus = 5
