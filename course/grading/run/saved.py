"""The saved runs: what a grading process leaves for the one ``nbgrader autograde`` that records a chapter.

:func:`save_run` writes a worker's result under ``.judge/runs/<chapter>/<student>/`` (the executed notebook, each
probe's raw bytes as the sandbox wrote them); :func:`load_run` gives it back to the judge's preprocessor, only for the
very notebook and seed it was made from, and only through the wire's checks. :func:`staging_notes` is what the
intake and the repair found about a submission, for its report. Both sides import this module: the class pipeline
(:mod:`course.grading.classroom.pipeline`) writes, nbgrader's preprocessor (:mod:`course.grading.nbgrader.execute`) reads.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

from course.grading import paths
from course.grading.config import Limits
from course.grading.records import WorkerResult, grade_id
from course.grading.run.wire import loads
from course.grading.run.worker import strip_hidden_tests


def notebook_key(nb) -> str:
    """A hash of what is executed: every cell's type and source (hidden regions removed) and grade_id."""
    h = hashlib.sha256()
    for c in nb.cells:
        src = strip_hidden_tests(c.source) if is_grade(c) else c.source
        h.update(f"{c.cell_type}\0{grade_id(c) or ''}\0{src}\0".encode())
    return h.hexdigest()[:24]


def run_dir(root: Path, chapter: str, student: str) -> Path:
    return paths.judge_dir(root) / "runs" / chapter / student


def notes_path(root: Path, chapter: str, student: str) -> Path:
    d = paths.judge_dir(root) / "staged-notes" / chapter
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{student}.json"


def staging_notes(root: Path, chapter: str, student: str) -> dict:
    """What staging found about a submission (intake and repair), for its report; {} if it was not staged."""
    try:
        return json.loads(notes_path(root, chapter, student).read_text())
    except (OSError, ValueError):
        return {}


def save_run(folder: Path, result: WorkerResult, key: str, input_key: str, seed: int) -> None:
    """Save a worker's result: the executed notebook as JSON, each probe's raw bytes as written in the sandbox."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    records = {}
    for i, (test, rec) in enumerate(result.results.items()):
        raw = result.raw.get(test)
        if raw is not None:
            (folder / f"probe-{i}.pt").write_bytes(raw)
            records[test] = {"file": f"probe-{i}.pt"}
        else:
            records[test] = {k: rec[k] for k in ("ok", "error", "where") if k in rec}
    meta = {"key": key, "input_key": input_key, "seed": seed, "records": records, "graded": False, **result.meta()}
    (folder / "notebook.ipynb").write_text(nbformat.writes(result.notebook))
    (folder / "meta.json").write_text(json.dumps(meta))


def load_run(base: Path, chapter: str, student: str, nb, seed: int, limits: Limits) -> WorkerResult | None:
    """The saved run of this exact sanitized notebook and seed, or ``None`` (then the judge runs it itself)."""
    folder = Path(base) / chapter / student
    try:
        meta = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    if meta.get("key") != notebook_key(nb) or meta.get("seed") != seed:
        return None
    results = {}
    for test, rec in meta["records"].items():
        if "file" in rec:
            try:
                results[test] = loads((folder / rec["file"]).read_bytes(), limits.probe_result_bytes)
            except (OSError, ValueError) as err:
                results[test] = {"ok": False, "error": str(err)}
            except MemoryError:
                results[test] = {"ok": False, "error": "the probe's result was too large for the grader's memory"}
        else:
            results[test] = rec
    notebook = nbformat.reads((folder / "notebook.ipynb").read_text(), as_version=4)
    return WorkerResult.from_meta(meta, notebook, results)
