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


# --- The order the xdist workers take the tests in: the longest first ------------------------------------------------
# `make test` hands whole groups (an xdist_group, or a single test) to three workers as each frees up. Taken in file
# order, the longest groups could start last and leave a worker running alone for minutes at the end while the
# other core idles. Here the groups (and the modules, for tests in none) are ordered by how long their tests took in
# an earlier run (tests/durations.json, rewritten by `make durations`), longest first, so the run ends on short
# tests. The order changes when tests run, never what they check; a test unknown to the file counts as
# DEFAULT_SECONDS.
DURATIONS = Path(__file__).with_name("durations.json")
DEFAULT_SECONDS = 2.0


def _unit(item: pytest.Item) -> str:
    """What is ordered as one: the item's xdist_group (which xdist hands to one worker), or else its module (whose
    ungrouped tests stay together, in file order, so a module-scoped fixture is not built again between them)."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return "@" + str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    return item.nodeid.split("::", 1)[0]


def _base(nodeid: str) -> str:
    return nodeid.split("@", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import json

    try:
        known = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return
    cost: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        unit = _unit(item)
        cost[unit] = cost.get(unit, 0.0) + float(known.get(_base(item.nodeid), DEFAULT_SECONDS))
        first.setdefault(unit, index)
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[_unit(item)], first[_unit(item)], position[id(item)]))


# `make durations` (COURSE_RECORD_DURATIONS=path): each test's setup + call + teardown seconds, as the controller
# receives them, written at the end of the run.
_RECORDED: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("COURSE_RECORD_DURATIONS"):
        key = _base(report.nodeid)
        _RECORDED[key] = _RECORDED.get(key, 0.0) + report.duration


def pytest_unconfigure(config: pytest.Config) -> None:
    import json

    target = os.environ.get("COURSE_RECORD_DURATIONS")
    if target and _RECORDED and not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        Path(target).write_text(json.dumps({k: round(v, 1) for k, v in sorted(_RECORDED.items())}, indent=0) + "\n")
