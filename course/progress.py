"""A student's view of a chapter: short failure messages, and a progress summary they can run at any time.

* :func:`install` (called when a chapter's setup cell imports ``course.checks``)
  does two things in the notebook's IPython kernel: a failing check is shown
  as the failing line of the test cell plus the check's message (expected,
  got, likely cause) instead of a traceback through this package; and every
  test cell's outcome is remembered.
* :func:`summary` (the locked cell at the end of every chapter) reads the
  chapter's notebook for its exercises and points, prints which visible tests
  pass, and saves that to ``.progress/<chapter>.json`` next to the notebook,
  which the course's landing page (``index.ipynb``) reads.

Nothing here decides a grade: the grader re-checks everything outside the
kernel, with hidden tests.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
import traceback
from pathlib import Path

_RESULTS: dict[str, tuple[bool, str]] = {}  # hash of a test cell's source -> (passed, first line of the failure)
_RED, _BOLD, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"


def _key(source: str) -> str:
    return hashlib.sha1(source.strip().encode()).hexdigest()


def _is_cell_file(filename: str) -> bool:
    return "ipykernel_" in filename or filename.startswith("<ipython-input") or filename.startswith("<cell")


def tutor_traceback(etype, value, tb) -> list[str]:
    """The short failure a student sees: the failing line of their cell, then the check's message."""
    frames = [f for f in traceback.extract_tb(tb) if _is_cell_file(f.filename)]
    where = frames[0] if frames else None  # the outermost frame is the cell being run
    if etype is NotImplementedError:
        head = f"{_RED}{_BOLD}Not done yet{_RESET}"
        body = ["The exercise this test calls still raises NotImplementedError: replace that line "
                "with your solution, run its cell, then run this test again."]
    else:
        head = f"{_RED}{_BOLD}Check failed{_RESET}"
        body = str(value).splitlines()
    if where is not None:
        head += f" at line {where.lineno} of this cell:  {(where.line or '').strip()}"
    return [head, *body]


def _handler(shell, etype, value, tb, tb_offset=None):
    stb = tutor_traceback(etype, value, tb)
    shell._showtraceback(etype, value, stb)
    return stb


def _looks_like_test(source: str) -> bool:
    # Test cells open with a one-line docstring (the hygiene tests enforce it); other cells do not.
    return source.lstrip().startswith('"""')


def _post_run(result) -> None:
    info = getattr(result, "info", None)
    source = getattr(info, "raw_cell", None) or ""
    if not _looks_like_test(source):
        return
    err = result.error_in_exec or result.error_before_exec
    message = "" if err is None else (str(err).splitlines() or [type(err).__name__])[0][:200]
    _RESULTS[_key(source)] = (err is None, message)


def install(failures: tuple[type[BaseException], ...] = ()) -> bool:
    """Register the short failure display and the test-outcome recorder in the running IPython; return whether it did.

    ``failures``: the exception types shown as the failing line plus their message (``course.checks`` passes its
    ``CheckFailed``, so this module never imports it back); ``NotImplementedError`` (an unsolved exercise) always is.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    if shell is None:
        return False
    shell.set_custom_exc((*failures, NotImplementedError), _handler)
    events = shell.events
    if _post_run not in events.callbacks.get("post_run_cell", []):
        events.register("post_run_cell", _post_run)
    return True


def record(source: str, passed: bool, message: str = "") -> None:
    """Remember a test cell's outcome (what the kernel hook does; also for tests)."""
    _RESULTS[_key(source)] = (passed, message)


def exercises(nb: dict) -> list[dict]:
    """The exercises of a chapter notebook: title, points and the test cells (grade_id, points, source)."""
    out: list[dict] = []
    title = None
    for cell in nb.get("cells", []):
        source = "".join(cell.get("source", "")) if isinstance(cell.get("source"), list) else cell.get("source", "")
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "markdown":
            m = re.search(r"^#+\s*(Exercise\s+[\d.]+[^\n]*)", source, re.M)
            if m:
                title = re.sub(r"[`*]", "", m.group(1)).strip()
        if meta.get("solution") and cell.get("cell_type") == "code":
            out.append({"title": title or meta.get("grade_id"), "solution": meta.get("grade_id"), "tests": []})
        if meta.get("grade") and cell.get("cell_type") == "code" and out:
            out[-1]["tests"].append({"grade_id": meta["grade_id"], "points": float(meta.get("points", 0)),
                                     "source": re.sub(r"\n?### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "",
                                                      source, flags=re.S)})
    return out


def status(nb: dict) -> list[dict]:
    """Per exercise: visible tests passed, failed and not yet run, and the points available."""
    rows = []
    for ex in exercises(nb):
        passed = failed = unrun = 0
        first_failure = ""
        for t in ex["tests"]:
            got = _RESULTS.get(_key(t["source"]))
            if got is None:
                unrun += 1
            elif got[0]:
                passed += 1
            else:
                failed += 1
                first_failure = first_failure or f"{t['grade_id']}: {got[1]}"
        rows.append({"title": ex["title"], "tests": len(ex["tests"]), "passed": passed, "failed": failed,
                     "not_run": unrun, "points": sum(t["points"] for t in ex["tests"]), "first_failure": first_failure})
    return rows


def summary(chapter: str, folder: str | Path = ".", save: bool = True) -> None:
    """Print the chapter's progress table (visible tests per exercise) and save it for the landing page."""
    folder = Path(folder)
    path = folder / f"{chapter}.ipynb"
    if not path.is_file():
        print(f"(progress: {path.name} is not in this folder; save the notebook under its own name)")
        return
    rows = status(json.loads(path.read_text()))
    total = sum(r["points"] for r in rows)
    # the points are printed in their own column: drop a title's "(N points)"; never cut a title mid-word silently
    titles = [re.sub(r"\s*\(\s*[\d.]+\s+points?\s*\)\s*$", "", str(r["title"])) for r in rows]
    width = min(90, max([len(t) for t in titles] + [20]))
    titles = [t if len(t) <= width else t[:width - 1] + "\u2026" for t in titles]
    print(f"Progress in {chapter}: visible tests you have run in this session")
    for r, title in zip(rows, titles):
        mark = "done" if r["passed"] == r["tests"] else "to do" if r["failed"] == 0 else "failing"
        print(f"  {title:<{width}} {r['passed']}/{r['tests']} passing  ({r['points']:g} points)  {mark}")
        if r["first_failure"]:
            print(f"      first failure: {r['first_failure']}")
    print(f"  {'':<{width}} {total:g} points in all. The grader also runs hidden tests on inputs you have not seen.")
    if save:
        d = folder / ".progress"
        try:
            d.mkdir(exist_ok=True)
            (d / f"{chapter}.json").write_text(json.dumps({"chapter": chapter, "saved": time.strftime("%Y-%m-%d %H:%M"),
                                                           "exercises": rows}, indent=1))
        except OSError:
            pass


def saved(folder: str | Path) -> dict[str, dict]:
    """Read every ``.progress/<chapter>.json`` one or two levels below ``folder`` (for the landing page)."""
    out = {}
    for p in sorted([*Path(folder).glob("*/.progress/*.json"), *Path(folder).glob("*/*/.progress/*.json")]):
        try:
            out[p.stem] = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
    return out


def overview(folder: str | Path = ".") -> None:
    """Print, per chapter, the visible tests passing when its progress cell last ran (the landing page's cell)."""
    found = saved(folder)
    if not found:
        print("No progress recorded yet: run a chapter's last cell (its progress cell) to record it.")
        return
    for chapter, data in sorted(found.items()):
        rows = data.get("exercises", [])
        tests = sum(r["tests"] for r in rows)
        passed = sum(r["passed"] for r in rows)
        points = sum(r["points"] for r in rows)
        done = sum(1 for r in rows if r["tests"] and r["passed"] == r["tests"])
        print(f"{chapter:<24} {passed:>3}/{tests:<3} visible tests passing, {done}/{len(rows)} exercises done "
              f"({points:g} points)   saved {data.get('saved', '?')}")
