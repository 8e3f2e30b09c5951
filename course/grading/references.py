"""Reference results: the same probes, run on the reference solution, where no student code runs.

The judge computes every reference itself: :func:`compute` runs the source
notebook with its solutions (markers removed, test cells skipped) in a
worker of its own, sends it every probe with the grading seed, and keeps
the plain data that comes back. Student workers never see these values.

The seed comes from :func:`course_seed`: a random number kept in
``.judge/seed`` at the course root (git-ignored, instructor side), so that
hidden inputs differ between course installations but not between
regrades. ``--seed`` (or ``COURSE_JUDGE_SEED``) overrides it.
"""
from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path

import nbformat

from course.grading import wire
from course.grading.judge import Judge, JudgeError, load
from course.grading.sandbox import Limits
from course.grading.worker import nb_meta, run_submission

_MARKER_LINE = ("### BEGIN SOLUTION", "### END SOLUTION")
_CACHE: dict[tuple, dict] = {}


def judge_dir(root: Path) -> Path:
    """The instructor-only folder of the judge (seed, caches, reports): ``<course>/.judge``."""
    d = Path(root) / ".judge"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


def course_seed(root: Path) -> int:
    """Return the course's grading seed (``COURSE_JUDGE_SEED``, else ``.judge/seed``, created on first use)."""
    env = os.environ.get("COURSE_JUDGE_SEED")
    if env:
        return int(env)
    path = judge_dir(root) / "seed"
    if path.is_file():
        try:
            return int(path.read_text().strip())
        except ValueError:
            pass
    seed = random.SystemRandom().randrange(1, 2 ** 31)
    path.write_text(f"{seed}\n")
    os.chmod(path, 0o600)
    return seed


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
    nbs = sorted((Path(root) / "source" / chapter).glob("*.ipynb"))
    if len(nbs) != 1:
        raise JudgeError(f"source/{chapter} must hold exactly one notebook, found {len(nbs)}")
    return nbs[0]


def reference_notebook(chapter: str, root: Path) -> nbformat.NotebookNode:
    """The source notebook with its solutions in place (markers removed), as the reference run executes it."""
    nb = nbformat.read(str(source_notebook(chapter, root)), as_version=4)
    for c in nb.cells:
        if nb_meta(c).get("solution"):
            c.source = "\n".join(line for line in c.source.splitlines() if line.strip() not in _MARKER_LINE)
    return nb


def cache_key(chapter: str, root: Path, seed: int, judge: Judge) -> str:
    """Hash of what the references depend on: source notebook, probes, course helpers, seed, torch version."""
    h = hashlib.sha256()
    h.update(source_notebook(chapter, root).read_bytes())
    h.update(judge.fingerprint().encode())
    pkg = Path(__file__).resolve().parents[1]
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.read_bytes())
    import torch
    h.update(f"{seed}|{torch.__version__}|{sys.version_info[:2]}".encode())
    return h.hexdigest()[:20]


def compute(chapter: str, root: Path, seed: int, limits: Limits | None = None,
            judge: Judge | None = None) -> dict[str, dict]:
    """Run every probe of ``chapter`` on the reference solution; return ``{grade_id: record}``.

    Cached in memory for the process. Raises :class:`JudgeError` if the
    reference fails any probe or any of its own cells: a hidden test that
    the reference cannot pass is a bug to fix before anyone is graded.
    """
    root = Path(root).resolve()
    judge = judge or load(chapter, root)
    key = (chapter, str(root), cache_key(chapter, root, seed, judge))
    if key in _CACHE:
        return _CACHE[key]
    nb = reference_notebook(chapter, root)
    files = source_notebook(chapter, root).parent
    staged = _stage_files(files)
    try:
        result = run_submission(nb, chapter, "reference", judge.codes(), seed, files=staged,
                                limits=limits, course_root=root, decoys=False, skip_tests=True)
    finally:
        import shutil
        shutil.rmtree(staged, ignore_errors=True)
    broken = [f"cell {i}: {o.get('ename')}: {o.get('evalue', '')[:200]}"
              for i, c in enumerate(result.notebook.cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    failed = {t: r.get("error", "?") + ("\n" + r["where"] if r.get("where") else "")
              for t, r in result.results.items() if not r.get("ok")}
    if broken or failed:
        raise JudgeError(f"the reference solution of {chapter} does not run cleanly in the judge "
                         f"(flags: {result.flags}; events: {result.events}):\n"
                         + "\n".join(broken + [f"probe {t}: {e}" for t, e in failed.items()]))
    _CACHE[key] = result.results
    return result.results


def _stage_files(folder: Path) -> Path:
    """A copy of the chapter's source folder without notebooks and without the judge file."""
    import shutil
    import tempfile

    dest = Path(tempfile.mkdtemp(prefix="judge-ref-files-"))
    for item in Path(folder).iterdir():
        if item.suffix == ".ipynb" or item.name == "judge.py" or item.name.startswith((".", "__pycache__")):
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name)
        else:
            shutil.copy2(item, dest / item.name)
    return dest


def save(records: dict[str, dict], path: Path) -> None:
    """Write reference records (for the in-kernel path) as a weights-only-loadable file."""
    import io

    import torch
    buf = io.BytesIO()
    torch.save({t: {"ok": r["ok"], "value": wire.encode(r.get("value"))} for t, r in records.items()}, buf)
    Path(path).write_bytes(buf.getvalue())


def load_saved(path: Path) -> dict[str, dict]:
    """Read what :func:`save` wrote, with ``weights_only=True``."""
    import io

    import torch
    raw = torch.load(io.BytesIO(Path(path).read_bytes()), weights_only=True)
    return {t: {"ok": bool(r["ok"]), "value": wire.decode(r.get("value"))} for t, r in raw.items()}
