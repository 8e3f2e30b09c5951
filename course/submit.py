"""The student's *Submit*: hands in the working copy, says so when nothing in it was answered, refuses unsaved work.

The Assignments tab's *Submit* runs nbgrader's exchange in the student's own Jupyter server. The
student's nbgrader configuration (written by :mod:`course.lab`, and by the hub for a class) makes
``my_work/<chapter>/`` (on a hub: ``~/<chapter>/``) the one working copy that the landing page opens,
*Fetch* creates and *Submit* hands in (``Exchange.path_includes_course = False``), and selects
:class:`ExchangeSubmit` here.

:class:`ExchangeSubmit` is nbgrader's own submit with one check first: if every released notebook is
present, readable, and **no solution cell differs from the release** (same ``grade_id``, same source),
the submission would hand in the blank exercises. It then refuses once, with a message that the tab
shows in its "Invalid Submission" dialog: which copy it looked at, save first, or press *Submit*
again to hand it in unchanged. A second *Submit* of the same, still unchanged files goes through
(a digest of the notebooks is kept in the student's nbgrader cache until then).

It also refuses, every time, to hand in a notebook **with unsaved changes**: the tab's *Submit* copies the
files on disk, and a student who ran their answer and pressed *Submit* before the autosave (up to two
minutes later) handed in the old file without a word. The server cannot see the open document, but the
student's kernels can say when they last ran a cell of it: :mod:`course.lab` gives the student's lab an
IPython startup file that records that time after each cell (``COURSE_RUN_LOG``). Running a cell always
changes the document (outputs, execution counts), so a notebook whose file on disk is older than its last
run holds changes the file does not: Submit says which, and asks to save first. It is not caught when the
student typed an answer and did not run it; a lab without the recorder (no ``COURSE_RUN_LOG``) checks
nothing.

nbgrader's tab shows a failed submit as the exception's whole traceback. :func:`install` (called from
the student's ``nbgrader_config.py``, which the tab's server extension loads before every action)
wraps ``AssignmentList.submit_assignment`` so that the dialog shows only the message of a refusal
made here; any other failure is shown as nbgrader shows it.
"""
from __future__ import annotations

import hashlib
import json
import os
import textwrap
import time
from pathlib import Path

from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment as _NbgraderFetch
from nbgrader.exchange.default.submit import ExchangeSubmit as _NbgraderSubmit
from nbgrader.utils import find_all_notebooks

#: The last refusal made by :class:`ExchangeSubmit` in this process (read by the tab's wrapper).
_LAST_REFUSAL: dict[str, str] = {}


class NothingAnswered(ExchangeError):
    """Raised instead of handing in a notebook in which no solution cell was changed."""


class UnsavedChanges(ExchangeError):
    """Raised instead of handing in a notebook whose open document holds changes its file does not."""


def unsaved(src_dir: Path, run_log: str | Path | None = None) -> list[tuple[str, float, float]]:
    """The notebooks of ``src_dir`` (relative paths) run after their file was last written, as
    ``(name, last run, file's mtime)``; empty when the lab records no runs (``run_log`` or ``COURSE_RUN_LOG``)."""
    from course import lab

    folder = run_log or os.environ.get(lab.RUN_LOG_ENV)
    if not folder:
        return []
    out = []
    for name in find_all_notebooks(str(src_dir)):
        path = Path(src_dir) / name
        ran = lab.last_run(folder, path)
        try:
            saved = path.stat().st_mtime
        except OSError:
            continue
        if ran is not None and ran > saved:
            out.append((name, ran, saved))
    return out


def unsaved_message(assignment: str, found: list[tuple[str, float, float]], width: int = 80) -> str:
    """What the student reads when :func:`unsaved` found something."""
    clock = lambda t: time.strftime("%H:%M:%S", time.localtime(t))  # noqa: E731
    files = "; ".join(f"{assignment}/{name} (saved {clock(saved)}, a cell ran at {clock(ran)})"
                      for name, ran, saved in found)
    paragraphs = [
        f"Not submitted: {files} has changes that are not saved. Submit hands in the file on disk, so it "
        f"would hand in your notebook as it was at its last save.",
        "Save it (Ctrl+S, or File > Save Notebook), then press Submit again. If you closed it without saving "
        "on purpose, open it and save it once.",
    ]
    return "\n\n".join(textwrap.fill(p, width) for p in paragraphs)


def solution_sources(nb: dict) -> dict[str, str]:
    """Return ``{grade_id: source}`` of the notebook's solution cells (source stripped of outer whitespace)."""
    out = {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id"):
            src = cell.get("source", "")
            out[meta["grade_id"]] = ("".join(src) if isinstance(src, list) else src).strip()
    return out


def answered(submitted: dict, released: dict) -> bool:
    """Whether any solution cell of ``submitted`` differs from ``released``.

    A released solution cell that cannot be found in the submission (its ``grade_id`` removed, the cell
    deleted) counts as changed: the grader repairs or reports such notebooks, and a warning here would
    be wrong. A release without solution cells counts as answered (nothing to check)."""
    mine, theirs = solution_sources(submitted), solution_sources(released)
    if not theirs:
        return True
    return any(gid not in mine or mine[gid] != src for gid, src in theirs.items())


def unanswered(src_dir: Path, release_dir: Path) -> list[str] | None:
    """The released notebooks (relative paths) of ``src_dir`` left as released, or None if any was answered.

    None also when a released notebook is missing or unreadable in ``src_dir``: nbgrader's own checks and
    the grader deal with those."""
    names = find_all_notebooks(str(release_dir))
    untouched = []
    for name in names:
        try:
            mine = json.loads((Path(src_dir) / name).read_text(encoding="utf-8"))
            theirs = json.loads((Path(release_dir) / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if answered(mine, theirs):
            return None
        untouched.append(name)
    return untouched or None


def digest(src_dir: Path, names: list[str]) -> str:
    """A digest of the notebooks' bytes (the refusal is remembered for exactly these files)."""
    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode() + b"\0" + (Path(src_dir) / name).read_bytes() + b"\0")
    return h.hexdigest()


def refusal_message(assignment: str, names: list[str], width: int = 80) -> str:
    """What the student reads in the tab's dialog (a ``<pre>`` there: lines are wrapped here)."""
    files = ", ".join(f"{assignment}/{n}" for n in names)
    paragraphs = [
        f"Not submitted yet: none of your answers in {files} differs from the released notebook, "
        f"so this would hand in the blank exercises.",
        f"Your work belongs in {assignment}/ (the copy the landing page opens). If you worked there, "
        f"save it (Ctrl+S) and press Submit again. If you worked in another copy, move your answers "
        f"into {assignment}/ first.",
        "To hand in the unchanged notebook anyway, press Submit once more.",
    ]
    return "\n\n".join(textwrap.fill(p, width) for p in paragraphs)


class ExchangeSubmit(_NbgraderSubmit):
    """nbgrader's submit, refusing once when no solution cell of any notebook was changed."""

    def _confirm_path(self) -> Path:
        return Path(self.cache) / self.coursedir.course_id / ".unanswered" / self.coursedir.assignment_id

    def copy_files(self) -> None:
        self.init_release()
        found = unsaved(Path(self.src_path))
        if found:
            msg = unsaved_message(self.coursedir.assignment_id, found)
            _LAST_REFUSAL["message"] = msg
            self.log.warning(msg)
            raise UnsavedChanges(msg)
        names = unanswered(Path(self.src_path), Path(self.release_path))
        confirm = self._confirm_path()
        if names:
            stamp = digest(Path(self.src_path), names)
            if not (confirm.is_file() and confirm.read_text().strip() == stamp):
                confirm.parent.mkdir(parents=True, exist_ok=True)
                confirm.write_text(stamp)
                msg = refusal_message(self.coursedir.assignment_id, names)
                _LAST_REFUSAL["message"] = msg
                self.log.warning(msg)
                raise NothingAnswered(msg)
            self.log.warning("Submitting %s unchanged (confirmed by a second Submit)", self.coursedir.assignment_id)
        confirm.unlink(missing_ok=True)
        super().copy_files()


class ExchangeFetchAssignment(_NbgraderFetch):
    """nbgrader's fetch, giving each notebook it copies this kernel's ``language_info`` (JupyterLab writes it when
    a notebook opens, and the fetched chapter would show as unsaved at once). Files that were there before the
    fetch (the student's work: ``replace_missing_files`` adds only what is missing) are left alone."""

    def copy_files(self) -> None:
        from course import lab

        dest = Path(self.dest_path)

        def notebooks() -> set[Path]:
            return {p for p in dest.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts} if dest.is_dir() else set()

        before = notebooks()
        super().copy_files()
        for path in sorted(notebooks() - before):
            if path.is_symlink() or not path.is_file():
                continue
            try:
                path.write_text(lab.with_language_info(path.read_text(encoding="utf-8")), encoding="utf-8")
            except (OSError, ValueError) as err:  # the notebook stays as released
                self.log.warning("could not add language_info to %s: %s", path, err)


def install() -> bool:
    """Make the Assignments tab show a refusal's message alone, not a traceback; return whether installed now."""
    try:
        from nbgrader.server_extensions.assignment_list.handlers import AssignmentList
    except ImportError:  # pragma: no cover (nbgrader without its server extension)
        return False
    original = AssignmentList.submit_assignment
    if getattr(original, "_course_refusal", False):
        return False

    def submit_assignment(self, course_id, assignment_id):
        _LAST_REFUSAL.clear()
        out = original(self, course_id, assignment_id)
        message = _LAST_REFUSAL.pop("message", None)
        if message and not out.get("success"):
            return {"success": False, "value": message}
        return out

    submit_assignment._course_refusal = True
    submit_assignment.__wrapped__ = original
    AssignmentList.submit_assignment = submit_assignment
    return True


__all__ = ["ExchangeFetchAssignment", "ExchangeSubmit", "NothingAnswered", "UnsavedChanges", "answered", "install",
           "unanswered", "unsaved"]
