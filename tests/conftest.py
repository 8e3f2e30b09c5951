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
# The test processes (`make test` runs two, TEST_WORKERS) share two cores, and each starts kernels and sandboxed workers running torch. With
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
# `make test` hands out whole groups (an xdist_group) and single tests (any test in none) to the workers as each
# frees up, in the order of the collection. Taken in file order, the longest groups could start last and leave a
# worker running alone for minutes at the end while the other core idles. Here the collection is ordered by how long
# the tests took in an earlier run (tests/durations.json, written by `make durations`), longest first, so the run
# ends on short tests: a group by the sum of its tests; the ungrouped tests of a module by their module's sum, kept
# together in file order (a heuristic: xdist still deals them out one by one). The order changes when tests run,
# never what they check; a test the file does not know counts as DEFAULT_SECONDS.
DURATIONS = Path(__file__).with_name("durations.json")
DEFAULT_SECONDS = 0.5


def _unit(item: pytest.Item) -> str:
    """What is ordered as one: the item's xdist group (named as xdist names it), or else its module."""
    groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                     for m in item.iter_markers("xdist_group")})
    return "@" + "_".join(groups) if groups else item.nodeid.split("::", 1)[0]


def _base(nodeid: str) -> str:
    return nodeid.split("@", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import json

    try:
        known = {str(k): float(v) for k, v in json.loads(DURATIONS.read_text()).items()}
    except (OSError, ValueError, TypeError, AttributeError):  # no file, or not {nodeid: seconds}: the file order
        return
    units = [_unit(item) for item in items]
    cost: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, (item, unit) in enumerate(zip(items, units)):
        cost[unit] = cost.get(unit, 0.0) + known.get(_base(item.nodeid), DEFAULT_SECONDS)
        first.setdefault(unit, index)
    order = sorted(range(len(items)), key=lambda i: (-cost[units[i]], first[units[i]], i))
    items[:] = [items[i] for i in order]


# `make durations` (COURSE_RECORD_DURATIONS=path): each test's setup + call + teardown seconds, as the controller
# receives them, written at the end of the run. The controller takes the variable out of the environment, so that
# neither its workers nor a test's own pytest run (tests/test_ddp_process.py) write the file.
_RECORD: dict[str, object] = {"target": None, "seconds": {}}


def pytest_configure(config: pytest.Config) -> None:
    target = os.environ.get("COURSE_RECORD_DURATIONS")
    if target and not hasattr(config, "workerinput"):
        _RECORD["target"] = target
        os.environ.pop("COURSE_RECORD_DURATIONS")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _RECORD["target"]:
        seconds = _RECORD["seconds"]
        key = _base(report.nodeid)
        seconds[key] = seconds.get(key, 0.0) + report.duration


def pytest_unconfigure(config: pytest.Config) -> None:
    import json

    target, seconds = _RECORD["target"], _RECORD["seconds"]
    if target and seconds and not hasattr(config, "workerinput"):
        Path(target).write_text(json.dumps({k: round(v, 2) for k, v in sorted(seconds.items())}, indent=0) + "\n")
