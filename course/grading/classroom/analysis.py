"""Class item analysis: how a class did on each exercise and each hidden check of a chapter.

``grade-class`` writes, per chapter, ``.judge/analysis/<chapter>.html`` (tables and plots, for a browser) and
``<chapter>.csv`` (one row per exercise and per hidden check), from the judge's reports of that chapter:

* **pass rate** (the share of the class with full points on the item) and **mean score** (in points);
* **discrimination**: the correlation between the item's score and the rest of the chapter's total (the total
  without this item) over the class. Near 0 or below, the item does not separate students who did the chapter
  well from those who did not (too easy, too hard, or testing something else); empty where the item's score or
  the rest does not vary;
* the **misconceptions** most often diagnosed (:mod:`course.grading.judge.diagnosis`), per exercise;
* the submissions **flagged** by the intake or the judge.

Student ids and flags come from the students' side: the HTML escapes every string, and the CSV holds none.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade, is_solution

from course.grading.records import Report, grade_id, points
from course.grading.text import one_line


@dataclass
class Item:
    """One exercise (``level`` "exercise") or one hidden check, i.e. grade cell (``level`` "check")."""

    level: str
    name: str
    exercise: str
    max_points: float
    scores: list[float] = field(default_factory=list)
    discrimination: float | None = None

    @property
    def pass_rate(self) -> float:
        return sum(1 for s in self.scores if s >= self.max_points) / len(self.scores) if self.scores else 0.0

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0


@dataclass
class Analysis:
    chapter: str
    students: list[str]
    items: list[Item]
    misconceptions: list[tuple[str, str, int]]  # (exercise, note, how many students)
    flagged: list[tuple[str, list[str]]]         # (student, words)
    totals: list[float]
    max_total: float


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's r of two equally long lists; None where either does not vary (or fewer than 3 students)."""
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)


def analyse(chapter: str, notebook: nbformat.NotebookNode, reports: dict[str, Report]) -> Analysis:
    """The chapter's items from its release ``notebook`` (exercises and grade cells, in order) and the reports."""
    exercise_of, current, cells = {}, None, []
    for c in notebook.cells:
        if is_solution(c):
            current = grade_id(c)
        if is_grade(c):
            cells.append((grade_id(c), points(c)))
            exercise_of[grade_id(c)] = current or "(before any exercise)"
    students = sorted(reports)
    per_cell = {g: [reports[s].cells[g].points if g in reports[s].cells else 0.0 for s in students]
                for g, _ in cells}
    totals = [sum(per_cell[g][i] for g, _ in cells) for i in range(len(students))]
    items: list[Item] = []
    for ex in dict.fromkeys(exercise_of[g] for g, _ in cells):
        mine = [(g, p) for g, p in cells if exercise_of[g] == ex]
        items.append(Item("exercise", ex, ex, sum(p for _, p in mine),
                          [sum(per_cell[g][i] for g, _ in mine) for i in range(len(students))]))
        items += [Item("check", g, ex, p, list(per_cell[g])) for g, p in mine]
    for item in items:
        rest = [t - s for t, s in zip(totals, item.scores)]
        item.discrimination = correlation(item.scores, rest)
    seen = Counter((cell, d.get("note", "")) for r in reports.values() for cell, d in (r.diagnoses or {}).items()
                   if isinstance(d, dict))
    misconceptions = [(cell, note, n) for (cell, note), n in seen.most_common()]
    flagged = [(s, reports[s].words() or [one_line(f, 160) for f in reports[s].flags]) for s in students
               if reports[s].words() or reports[s].flags]
    return Analysis(chapter, students, items, misconceptions, flagged, totals, sum(p for _, p in cells))


def _fmt(x: float | None, digits: int = 2) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def write_csv(a: Analysis, path: Path) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["level", "item", "exercise", "max_points", "students", "pass_rate", "mean_score",
                    "discrimination"])
        for it in a.items:
            w.writerow([it.level, it.name, it.exercise, f"{it.max_points:g}", len(it.scores), _fmt(it.pass_rate, 3),
                        _fmt(it.mean, 3), _fmt(it.discrimination, 3)])
    return path


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _plots(a: Analysis) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = []
    checks = [it for it in a.items if it.level == "check"]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(checks) + 1.2))
    ax.barh([it.name for it in checks][::-1], [it.pass_rate for it in checks][::-1], color="#4c72b0")
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the class that passed")
    ax.set_title(f"{a.chapter}: pass rate per hidden check")
    out.append(("Pass rate per hidden check", _png(fig)))
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.hist(a.totals, bins=min(20, max(5, len(a.totals))), range=(0, a.max_total or 1), color="#55a868")
    ax.set_xlabel(f"points (of {a.max_total:g})")
    ax.set_ylabel("students")
    ax.set_title(f"{a.chapter}: totals")
    out.append(("Distribution of totals", _png(fig)))
    plt.close(fig)
    return out


_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}td.n{text-align:right}"
          "tr.exercise{background:#eef}.low{color:#b00;font-weight:bold}")


def write_html(a: Analysis, path: Path) -> Path:
    e = html.escape
    rows = []
    for it in a.items:
        low = it.discrimination is not None and it.discrimination < 0.2
        rows.append(f'<tr class="{it.level}"><td>{e(it.level)}</td><td>{e(it.name)}</td><td>{e(it.exercise)}</td>'
                    f'<td class="n">{it.max_points:g}</td><td class="n">{100 * it.pass_rate:.0f}%</td>'
                    f'<td class="n">{it.mean:.2f}</td>'
                    f'<td class="n{" low" if low else ""}">{e(_fmt(it.discrimination))}</td></tr>')
    mis = "".join(f"<tr><td>{e(cell)}</td><td>{e(note)}</td><td class='n'>{n}</td></tr>"
                  for cell, note, n in a.misconceptions) or "<tr><td colspan='3'>none diagnosed</td></tr>"
    flagged = "".join(f"<tr><td>{e(one_line(s, 64))}</td><td>{e(one_line('; '.join(w), 300))}</td></tr>"
                      for s, w in a.flagged) or "<tr><td colspan='2'>none</td></tr>"
    plots = "".join(f"<h2>{e(title)}</h2><img alt='{e(title)}' src='{src}'>" for title, src in _plots(a))
    mean_total = sum(a.totals) / len(a.totals) if a.totals else 0.0
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{e(a.chapter)}: item analysis</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<style>{_STYLE}</style></head><body>
<h1>{e(a.chapter)}: item analysis</h1>
<p>{len(a.students)} submissions; mean total {mean_total:.2f} of {a.max_total:g} points. Pass rate: the share of the
class with full points on the item. Discrimination: the correlation of the item's score with the rest of the total;
below 0.2 (in red) the item barely separates strong from weak submissions.</p>
<h2>Exercises and hidden checks</h2>
<table id="items"><tr><th>level</th><th>item</th><th>exercise</th><th>points</th><th>pass rate</th><th>mean</th>
<th>discrimination</th></tr>{''.join(rows)}</table>
<h2>Most common misconceptions</h2>
<table id="misconceptions"><tr><th>exercise</th><th>known mistake</th><th>students</th></tr>{mis}</table>
<h2>Flagged submissions</h2>
<table id="flagged"><tr><th>student</th><th>flags</th></tr>{flagged}</table>
{plots}
</body></html>
"""
    path.write_text(page)
    return path


def write(root: Path, chapter: str, reports: dict[str, Report]) -> tuple[Path, Path]:
    """Write ``.judge/analysis/<chapter>.html`` and ``.csv`` for ``reports``; return both paths."""
    from course.grading import paths

    release_nb = next((Path(root) / "release" / chapter).glob("*.ipynb"))
    a = analyse(chapter, nbformat.read(str(release_nb), as_version=4), reports)
    out = paths.judge_dir(Path(root)) / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    return write_html(a, out / f"{chapter}.html"), write_csv(a, out / f"{chapter}.csv")
