"""Known answers: a chapter's mutants (wrong) and alternatives (different but correct), loaded and applied.

Part of the judge: the diagnosis (:mod:`.diagnosis`) names a failing answer after the mutant it behaves like,
and the proofs (:mod:`course.grading.authoring`) grade every one of them.

A chapter's known answers live with their exercise, in ``source/<assignment>/exercises/<grade id>/mutants/*.py``
(wrong) and ``.../alternatives/*.py`` (different but correct), never released. Each file is a small Python module::

    '''Forgot optimizer.zero_grad(): gradients pile up across calls.'''
    CELL = "sgd_step"                 # grade_id of the solution cell it replaces
    FAILS = ["test_sgd_step_no_accumulation"]  # grade cells that must lose points
    SOURCE = '''
    def sgd_step(params, loss_fn, lr):
        ...
    '''

(``FAILS`` is empty, or absent, for alternatives.) A mutant that changes a few lines of the reference may say
only those, instead of ``SOURCE``::

    CHANGES = [(r'''
            optimizer.zero_grad()
    ''', '')]                         # (old, new): whole lines of the reference solution, old found exactly once

Each old text is whole lines of the reference's solution cell (markers removed, dedented), found there exactly once;
a leading newline of either text is dropped (so each can start on a line of its own).
Blind answers (``blind_*.py``) and alternatives stay whole, as they were written.
"""
from __future__ import annotations

import importlib.util
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade, is_solution

from course.grading import paths
from course.grading.judge.verdicts import exercises_dir
from course.grading.records import grade_id, points


@dataclass(frozen=True)
class Variant:
    """One known answer for one solution cell: wrong (``fails`` non-empty) or correct."""

    name: str
    kind: str  # "mutant" or "alternative"
    cell: str
    source: str
    fails: tuple[str, ...]
    description: str
    klass: str = ""  # the class of mistake (``KIND``); "do-nothing" ones must score 0 on their exercise
    note: str = ""  # what a student whose answer behaves like this mistake reads (``NOTE``, a mutant's)

    @property
    def blind(self) -> bool:
        """Written by an independent student from the release alone, then adopted (``blind_*.py``)."""
        return self.name.startswith("blind_")


def solution_cells(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Return {grade_id: source} of the solution cells."""
    return {grade_id(c): c.source for c in nb.cells
            if is_solution(c)}


def graded_cells(nb: nbformat.NotebookNode) -> dict[str, float]:
    """Return {grade_id: points} of the graded (test) cells."""
    out = {}
    for c in nb.cells:
        if is_grade(c):
            out[grade_id(c)] = points(c)
    return out


_MARKER = re.compile(r"^\s*###\s*(BEGIN|END)\s+SOLUTION\s*$")


def strip_markers(source: str) -> str:
    """Return a solution cell's text without its ``### BEGIN/END SOLUTION`` lines (what a student would submit)."""
    return "\n".join(line for line in source.splitlines() if not _MARKER.match(line))


def load_variants(assignment: str, kind: str, root: Path = paths.REPO) -> list[Variant]:
    """Load ``source/<assignment>/exercises/*/mutants/*.py`` (kind="mutant") or ``.../alternatives/*.py``
    (kind="alternative"), by file name; each must name the exercise whose folder holds it (``CELL``)."""
    folder = exercises_dir(assignment, root)
    out = []
    reference = None
    for path in sorted(folder.glob(f"*/{'mutants' if kind == 'mutant' else 'alternatives'}/*.py"),
                       key=lambda p: p.name):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"_variant_{assignment}_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fails = tuple(getattr(mod, "FAILS", ()))
        if hasattr(mod, "CHANGES"):
            if kind != "mutant" or path.stem.startswith("blind_") or hasattr(mod, "SOURCE"):
                raise ValueError(f"{path}: CHANGES is for authored mutants only, instead of SOURCE (blind answers and "
                                 "alternatives stay whole)")
            if reference is None:  # the source notebook, read once per call, only where a mutant needs it
                reference = solution_cells(_source_notebook(assignment, root))
            source = apply_changes(reference_solution(reference, mod.CELL, str(path)), mod.CHANGES, str(path))
        else:
            source = textwrap_dedent(mod.SOURCE)
        if kind == "mutant" and not fails:
            raise ValueError(f"{path}: a mutant must list the grade cells it FAILS")
        if kind == "alternative" and fails:
            raise ValueError(f"{path}: an alternative must not FAIL anything")
        if mod.CELL != path.parent.parent.name:
            raise ValueError(f"{path}: CELL = {mod.CELL!r}, but it sits in the folder of {path.parent.parent.name!r}")
        out.append(Variant(name=path.stem, kind=kind, cell=mod.CELL,
                           source=source, fails=fails, klass=getattr(mod, "KIND", ""),
                           note=getattr(mod, "NOTE", ""),
                           description=(mod.__doc__ or "").strip().splitlines()[0] if mod.__doc__ else path.stem))
    return out


def _source_notebook(assignment: str, root: Path) -> nbformat.NotebookNode:
    found = paths.source_notebooks(root, assignment)
    if len(found) != 1:
        raise ValueError(f"source/{assignment} must hold exactly one notebook, found {len(found)}")
    return nbformat.read(str(found[0]), as_version=4)


def reference_solution(solutions: dict[str, str], cell: str, where: str = "") -> str:
    """The reference's solution cell ``cell`` (from :func:`solution_cells`) as a variant's SOURCE would hold it:
    markers removed, dedented."""
    if cell not in solutions:
        raise ValueError(f"{where}: no solution cell {cell!r} in the reference")
    return textwrap_dedent(strip_markers(solutions[cell]))


def apply_changes(base: str, changes, where: str = "CHANGES") -> str:
    """``base`` with each ``(old, new)`` of ``changes`` applied in turn; ``old`` must be whole lines of the text so far,
    found there exactly once (a leading newline of ``old`` or ``new`` is dropped)."""
    text = base
    for i, pair in enumerate(changes):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, str) for t in pair)):
            raise ValueError(f"{where}: change {i} must be a pair of strings (old, new)")
        old, new = (t[1:] if t.startswith("\n") else t for t in pair)
        if not old:
            raise ValueError(f"{where}: change {i} has no old text")
        at = text.find(old)
        if at < 0:
            raise ValueError(f"{where}: change {i}: its old text is not in the reference: {old[:80]!r}")
        if text.find(old, at + 1) >= 0:
            raise ValueError(f"{where}: change {i}: its old text is in the reference more than once: {old[:80]!r}")
        if (at and text[at - 1] != "\n") or not (old.endswith("\n") or at + len(old) == len(text)):
            raise ValueError(f"{where}: change {i}: its old text is not whole lines: {old[:80]!r}")
        if new and not new.endswith("\n") and at + len(old) < len(text):
            new += "\n"
        text = text[:at] + new + text[at + len(old):]
    return textwrap_dedent(text)


def textwrap_dedent(text: str) -> str:
    """Return a variant's SOURCE dedented, with exactly one trailing newline."""
    return textwrap.dedent(text).strip("\n") + "\n"
