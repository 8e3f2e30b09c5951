"""One exercise side by side, for its author: statement, reference, visible tests, hidden probes, known answers.

``python -m course.grading exercise CHAPTER`` lists a chapter's exercises (each solution cell's grade id) with
their grade cells, points and known answers; ``python -m course.grading exercise CHAPTER EXERCISE`` prints that
exercise whole:

1. its statement (the markdown cells right above the solution cell);
2. the reference solution, and why it is right (judge.py's ``WHY``);
3. each grade cell: its points, the part students see, and the judge's probe and verdict for it;
4. every mutant (class of mistake, the grade cells it fails, the note a student reads, and its code as a
   unified diff against the reference), then every correct alternative, as diffs too.

It reads the instructor's files (``source/<chapter>/judge.py`` and the exercise's folder,
``source/<chapter>/exercises/<grade id>/``: its ``judge.py``, ``mutants/`` and ``alternatives/``), never the release, and
prints solutions and hidden tests: an instructor's tool, which the student repository does not ship.
"""
from __future__ import annotations

import difflib
import inspect
import textwrap
from pathlib import Path

from nbgrader.utils import is_grade, is_solution

from course.grading.judge import verdicts as judge_mod
from course.grading.judge import answers
from course.grading.authoring import notebooks
from course.grading import paths
from course.grading.records import exercise_of, grade_id, points


def exercises(chapter: str, root: Path = paths.REPO) -> dict[str, list[tuple[str, float]]]:
    """``{exercise: [(grade cell, points), ...]}`` in notebook order (an exercise is a solution cell's grade id)."""
    nb = notebooks.read(notebooks.notebook_path(chapter, root))
    owner = exercise_of(nb)
    out: dict[str, list[tuple[str, float]]] = {grade_id(c): [] for c in nb.cells if is_solution(c)}
    for c in nb.cells:
        if is_grade(c) and grade_id(c) in owner:
            out[owner[grade_id(c)]].append((grade_id(c), points(c)))
    return out


def _statement(cells: list, index: int) -> str:
    """The markdown cells right above cell ``index`` (stopping at the first code cell)."""
    parts = []
    i = index - 1
    while i >= 0 and cells[i].cell_type == "markdown":
        parts.append(cells[i].source.strip())
        i -= 1
    return "\n\n".join(reversed(parts))


def _diff(reference: str, source: str, name: str) -> str:
    lines = difflib.unified_diff(reference.strip("\n").splitlines(), source.strip("\n").splitlines(),
                                 "reference", name, n=1, lineterm="")
    return "\n".join(list(lines)[2:]) or "(identical to the reference)"


def _heading(text: str, char: str = "=") -> str:
    return f"\n{text}\n{char * len(text)}\n"


def show(chapter: str, exercise: str, root: Path = paths.REPO) -> str:
    """The whole of one exercise as text (see the module docstring). ``KeyError`` names the chapter's exercises."""
    from course.grading.run.worker import strip_hidden_tests

    nb = notebooks.read(notebooks.notebook_path(chapter, root))
    cells = nb.cells
    at = [i for i, c in enumerate(cells) if is_solution(c) and grade_id(c) == exercise]
    if not at:
        raise KeyError(f"{chapter} has no exercise {exercise!r}; its exercises: {', '.join(exercises(chapter, root))}")
    index = at[0]
    reference = answers.strip_markers(cells[index].source)
    owner = exercise_of(nb)
    grades = [c for c in cells if is_grade(c) and owner.get(grade_id(c)) == exercise]
    judge = judge_mod.load(chapter, root)
    variants = [v for kind in ("mutant", "alternative") for v in answers.load_variants(chapter, kind, root)
                if v.cell == exercise]

    out = [f"{chapter} · exercise {exercise} · {sum(points(c) for c in grades):g} points in {len(grades)} "
           f"grade cell(s) · {sum(v.kind == 'mutant' for v in variants)} mutants, "
           f"{sum(v.kind == 'alternative' for v in variants)} alternatives",
           f"its folder: {(judge_mod.exercises_dir(chapter, root) / exercise).relative_to(root)}/ (judge.py: probes, "
           "verdicts, WHY; mutants/; alternatives/)"]
    out += [_heading("Statement"), _statement(cells, index) or "(no markdown right above the solution cell)"]
    out += [_heading("Reference solution"), reference.strip("\n")]
    if exercise in judge.why:
        out += ["", "Why it is right: " + judge.why[exercise]]
    for c in grades:
        gid = grade_id(c)
        out.append(_heading(f"Grade cell {gid} ({points(c):g} points)"))
        out += ["What students see:", textwrap.indent(strip_hidden_tests(c.source).strip("\n") or "(empty)", "    ")]
        probe = judge.probes.get(gid)
        if probe is None:
            out.append("No probe in judge.py: this cell is graded by what students see only.")
            continue
        out += ["Hidden probe (runs with the student's notebook):", textwrap.indent(probe.source.strip("\n"), "    ")]
        verdict = textwrap.dedent(inspect.getsource(probe.check)) if probe.check else "(none)"
        out += ["Verdict (runs in the judge):", textwrap.indent(verdict.strip("\n"), "    ")]
    for kind, title in (("mutant", "Mutants (wrong answers)"), ("alternative", "Alternatives (correct answers)")):
        chosen = [v for v in variants if v.kind == kind]
        out.append(_heading(f"{title}: {len(chosen)}"))
        for v in chosen:
            head = f"{v.name}" + (f" [{v.klass}]" if v.klass else "") + (" (blind)" if v.blind else "")
            out.append(_heading(head, "-").lstrip("\n"))
            out.append(v.description)
            if v.fails:
                out.append("fails: " + ", ".join(v.fails))
            if v.note:
                out.append("note: " + v.note)
            out += ["", _diff(reference, v.source, v.name), ""]
    return "\n".join(out).rstrip() + "\n"


def listing(chapter: str, root: Path = paths.REPO) -> str:
    """One line per exercise: its grade cells with points, and how many mutants and alternatives it has."""
    variants = answers.load_variants(chapter, "mutant", root) + answers.load_variants(chapter, "alternative", root)
    lines = [f"{chapter}: exercises (python -m course.grading exercise {chapter} EXERCISE prints one whole)"]
    for ex, grades in exercises(chapter, root).items():
        mut = sum(v.kind == "mutant" and v.cell == ex for v in variants)
        alt = sum(v.kind == "alternative" and v.cell == ex for v in variants)
        cells = ", ".join(f"{g} ({p:g})" for g, p in grades) or "no grade cell"
        lines.append(f"  {ex:<28} {sum(p for _, p in grades):>4g} pts  {mut:>3} mutants  {alt:>2} alternatives  {cells}")
    return "\n".join(lines) + "\n"


def main(chapter: str, exercise: str | None, root: Path = paths.REPO) -> int:
    import sys

    try:
        print(show(chapter, exercise, root) if exercise else listing(chapter, root), end="")
    except (KeyError, ValueError, judge_mod.JudgeError) as err:
        print(f"exercise: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    return 0
