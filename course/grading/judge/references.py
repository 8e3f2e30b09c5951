"""Reference results: the same probes, run on the reference solution, where no student code runs.

The judge computes every reference itself: :func:`compute` runs the source
notebook with its solutions (markers removed, test cells skipped) in a
worker of its own, sends it every probe with the grading seed, and keeps
the plain data that comes back. Student workers never see these values.

Each submission's seed is :func:`student_seed`: a keyed hash of the
installation's secret (``.judge/secret``, 32 random bytes, git-ignored,
instructor only), the assignment and the student. Code in a student's kernel
can read the probe that calls it, and so its own hidden inputs; with a key of
its own per student, those inputs say nothing about a classmate's, and the
reference values never leave the judge. Regrades use the same seeds.
``--seed N`` (or ``COURSE_JUDGE_SEED``) replaces the secret with a known key,
for tests. One reference run serves a whole class: the reference notebook
runs once, and the probes are sent once per student's seed.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import nbformat

from course.grading.run import wire
from course.grading import paths
from course.grading.paths import judge_dir
from course.grading.records import grade_id
from course.grading.judge.verdicts import Judge, JudgeError, load
from course.grading.run.sandbox import Limits
from course.grading.run.worker import run_submission
from nbgrader.utils import is_grade, is_locked, is_solution

_MARKER_LINE = ("### BEGIN SOLUTION", "### END SOLUTION")
_CACHE: dict[tuple, dict] = {}


def seed_for(root: Path, assignment: str, student: str, key: int | None = None) -> int:
    """The seed of one submission: :func:`student_seed` keyed by ``key`` (a test's fixed key) or the secret."""
    secret = f"seed:{int(key)}".encode() if key else course_secret(root)
    return student_seed(secret, assignment, student)


def course_secret(root: Path) -> bytes:
    """The installation's grading secret (``.judge/secret``, 32 random bytes, created on first use, mode 0600).

    ``COURSE_JUDGE_SEED`` (or ``--seed``) replaces it with a known key, for tests and regrades elsewhere.
    """
    env = os.environ.get("COURSE_JUDGE_SEED")
    if env:
        return f"seed:{int(env)}".encode()
    path = judge_dir(root) / "secret"
    if path.is_file() and path.stat().st_size >= 32:
        return path.read_bytes()
    secret = os.urandom(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(secret)
    return secret


def student_seed(secret: bytes, assignment: str, student: str) -> int:
    """The hidden inputs' seed of one submission: a keyed hash (HMAC-SHA256) of the student and the assignment.

    Inputs read from one submission (code in the student's process can read its probe) say nothing about
    another student's, nor about the reference values, which never leave the judge.
    """
    import hmac

    digest = hmac.new(secret, f"{assignment}\0{student}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % (2 ** 31 - 2) + 1


def source_notebook(chapter: str, root: Path) -> Path:
    nbs = paths.source_notebooks(root, chapter)
    if len(nbs) != 1:
        raise JudgeError(f"source/{chapter} must hold exactly one notebook, found {len(nbs)}")
    return nbs[0]


def reference_notebook(chapter: str, root: Path) -> nbformat.NotebookNode:
    """The source notebook with its solutions in place (markers removed), as the reference run executes it."""
    nb = nbformat.read(str(source_notebook(chapter, root)), as_version=4)
    for c in nb.cells:
        if is_solution(c):
            c.source = "\n".join(line for line in c.source.splitlines() if line.strip() not in _MARKER_LINE)
    return nb


# Set in the reference run's sandbox: a probe may then skip a costly call of the solution whose result no
# verdict reads from the reference record (Chapter 3's AOTInductor compile). The sweep runs every probe without
# it, on the reference, and decides each verdict: that is where the reference proves it passes. A student's
# kernel that sets it only skips its own call, and loses that cell.
REFERENCE_RUN = "COURSE_JUDGE_REFERENCE_RUN"


def reference_cells(nb) -> list[tuple[int, str, str]]:
    """(index, grade_id, source) of a reference notebook's solution cells and locked non-grade (setup) cells."""
    out = []
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and (is_solution(c) or (is_locked(c) and not is_grade(c))):
            out.append((i, grade_id(c) or "", c.source))
    return out


def cache_key(chapter: str, root: Path, seed: int, judge: Judge) -> str:
    """Hash of what the references depend on: source notebook, probes, course helpers, seed, torch version."""
    h = hashlib.sha256()
    h.update(source_notebook(chapter, root).read_bytes())
    h.update(judge.fingerprint().encode())
    pkg = paths.REPO / "course"
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.read_bytes())
    import torch
    h.update(f"{seed}|{torch.__version__}|{sys.version_info[:2]}".encode())  # seed 0: per-seed caches add it
    return h.hexdigest()[:20]


def compute(chapter: str, root: Path, seeds: int | list[int], limits: Limits | None = None,
            judge: Judge | None = None, threads: int | None = None) -> dict:
    """Run every probe of ``chapter`` on the reference solution, once per seed.

    Returns ``{grade_id: record}`` for one seed (an int), or ``{seed: {grade_id: record}}`` for a list.
    Cached in memory for the process. Raises :class:`JudgeError` if the reference fails any probe or any
    of its own cells: a hidden test that the reference cannot pass is a bug to fix before anyone is graded.
    """
    root = Path(root).resolve()
    judge = judge or load(chapter, root)
    many = isinstance(seeds, (list, tuple, set))
    wanted = list(dict.fromkeys(seeds if many else [seeds]))
    base = (chapter, str(root), cache_key(chapter, root, 0, judge))
    missing = [s for s in wanted if (base, s) not in _CACHE]
    if missing:
        nb = reference_notebook(chapter, root)
        staged = _stage_files(source_notebook(chapter, root).parent)
        try:
            result = run_submission(nb, chapter, "reference", judge.codes(), missing[0], files=staged,
                                    limits=limits, course_root=root, decoys=False, skip_tests=True,
                                    extra_seeds=tuple(missing[1:]), extra_env={REFERENCE_RUN: "1"},
                                    threads=threads)
        finally:
            import shutil
            shutil.rmtree(staged, ignore_errors=True)
        broken = [f"cell {i}: {o.get('ename')}: {o.get('evalue', '')[:200]}"
                  for i, c in enumerate(result.notebook.cells) if c.cell_type == "code"
                  for o in c.get("outputs", []) if o.get("output_type") == "error"]
        failed = {f"{t} (seed {s})": r.get("error", "?") + ("\n" + r["where"] if r.get("where") else "")
                  for s in missing for t, r in result.by_seed.get(s, {}).items() if not r.get("ok")}
        lost = [s for s in missing if len(result.by_seed.get(s, {})) != len(judge.probes)]
        if broken or failed or lost:
            raise JudgeError(f"the reference solution of {chapter} does not run cleanly in the judge "
                             f"(flags: {result.flags}; events: {result.events}):\n"
                             + "\n".join(broken + [f"probe {t}: {e}" for t, e in failed.items()]
                                         + [f"no results for seed {s}" for s in lost]))
        for s in missing:
            _CACHE[(base, s)] = result.by_seed[s]
    if not many:
        return _CACHE[(base, wanted[0])]
    return {s: _CACHE[(base, s)] for s in wanted}


def _stage_files(folder: Path) -> Path:
    """A copy of the chapter's source folder without notebooks and without the hidden tests (the judge file and
    the exercises' folders, with their known answers)."""
    import shutil
    import tempfile

    dest = Path(tempfile.mkdtemp(prefix="judge-ref-files-"))
    for item in Path(folder).iterdir():
        if (item.suffix == ".ipynb" or item.name in ("judge.py", "exercises")
                or item.name.startswith((".", "__pycache__"))):
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name)
        else:
            shutil.copy2(item, dest / item.name)
    return dest


def save(records: dict, path: Path) -> None:
    """Write reference records (``{seed: {grade_id: record}}``) as a weights-only-loadable file."""
    import io

    import torch
    buf = io.BytesIO()
    torch.save({int(seed): {t: {"ok": r["ok"], "value": wire.encode(r.get("value"))} for t, r in recs.items()}
                for seed, recs in records.items()}, buf)
    Path(path).write_bytes(buf.getvalue())


_SAVED: dict[tuple[str, int, int], dict] = {}


def load_saved(path: Path, seed: int | None = None) -> dict | None:
    """Read what :func:`save` wrote, with ``weights_only=True``: ``{seed: {grade_id: record}}``, or with ``seed``
    only that seed's ``{grade_id: record}`` (None if the file has none for it).

    The file is read once per process (keyed by its path, size and modification time): one nbgrader autograde
    records a whole class against one file, and reading every seed's values for each submission made recording
    grow with the square of the class. Each call decodes fresh copies, so nothing a verdict does to a reference
    value reaches another submission."""
    import copy
    import io

    import torch
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    raw = _SAVED.get(key)
    if raw is None:
        raw = torch.load(io.BytesIO(p.read_bytes()), weights_only=True)
        _SAVED.clear()
        _SAVED[key] = raw

    def records(recs: dict) -> dict:
        return {t: {"ok": bool(r["ok"]), "value": wire.decode(copy.deepcopy(r.get("value")))} for t, r in recs.items()}

    if seed is not None:
        recs = raw.get(int(seed))
        return None if recs is None else records(recs)
    return {int(s): records(recs) for s, recs in raw.items()}
