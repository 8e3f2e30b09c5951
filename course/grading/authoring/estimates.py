"""Each chapter's time estimate, counted from the release notebook and a measured run, never typed in.

A chapter's estimate is the sum of three parts, each shown in its title cell (and the total on the landing page):

* **reading**: the words of its markdown cells at :data:`PROSE_WORDS_PER_MINUTE`, and the lines of its code
  cells (demonstrations and visible tests; comments and blank lines left out) at :data:`CODE_LINES_PER_MINUTE`;
* **running**: the wall time of the whole notebook in student mode, as last measured and recorded in
  :data:`RUNS` by ``python -m course.grading run CHAPTER --record``;
* **exercises**: :data:`MINUTES_PER_POINT` for each point of its grade cells (an exercise's points already
  say how much there is to do).

The three rates are assumptions, stated here and in each title cell; the counts and the running time are
measured. ``python -m course.grading estimates [--write]`` prints each part and, with ``--write``, puts the
total into each source notebook's title cell; ``tests/test_hygiene.py`` checks that every title says the total.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.grading import paths, records
from course.grading.authoring import notebooks

REPO = paths.REPO
RUNS = REPO / "benchmarks" / "student_runs.json"

PROSE_WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 25
MINUTES_PER_POINT = 3
ROUND_TO = 5

# "**Time:** about 185 minutes, counted: ...": the title cell's estimate, as written by :meth:`Estimate.title_line`.
TITLE = re.compile(r"\*\*Time:\*\* about (\d+) minutes(?:, counted: reading about \d+ \([^)]*\), running its cells "
                   r"(?:about \d+|not measured yet), exercises about \d+ \(\d+ a point\))?(?: *<!--[^>]*-->)?")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_WORD = re.compile(r"[^\s#|*>`-][^\s]*")


@dataclass
class Estimate:
    chapter: str
    words: int
    code_lines: int
    points: float
    run_seconds: float | None

    @property
    def reading(self) -> float:
        return self.words / PROSE_WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE

    @property
    def running(self) -> float:
        return (self.run_seconds or 0.0) / 60

    @property
    def exercises(self) -> float:
        return self.points * MINUTES_PER_POINT

    @property
    def total(self) -> int:
        raw = self.reading + self.running + self.exercises
        return int(ROUND_TO * round(raw / ROUND_TO))

    def title_line(self) -> str:
        run = (f"running its cells about {max(1, round(self.running))}" if self.run_seconds is not None
               else "running its cells not measured yet")
        return (f"**Time:** about {self.total} minutes, counted: reading about {round(self.reading)} (prose at "
                f"{PROSE_WORDS_PER_MINUTE} words and code at {CODE_LINES_PER_MINUTE} lines a minute), {run}, "
                f"exercises about {round(self.exercises)} ({MINUTES_PER_POINT} a point)")

    def describe(self) -> str:
        run = f"{self.run_seconds:.0f} s" if self.run_seconds is not None else "not measured"
        return (f"{self.chapter}: about {self.total} min = reading {self.reading:.0f} ({self.words} words, "
                f"{self.code_lines} code lines) + running {self.running:.1f} ({run}) + exercises "
                f"{self.exercises:.0f} ({self.points:g} points)")


def runs() -> dict:
    return json.loads(RUNS.read_text()) if RUNS.is_file() else {}


def record_run(chapter: str, seconds: float) -> None:
    """Keep the student-mode wall time of ``chapter`` for its estimate."""
    import datetime
    import os
    import platform

    data = runs()
    data[chapter] = {"seconds": round(seconds, 1), "date": datetime.date.today().isoformat(),
                     "machine": f"{platform.machine()}, {os.cpu_count()} CPUs"}
    RUNS.parent.mkdir(parents=True, exist_ok=True)
    RUNS.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")


def count(nb) -> tuple[int, int, float]:
    """(prose words, code lines, points) of a notebook."""
    words = code = 0
    points = 0.0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            words += len(_WORD.findall(_COMMENT.sub("", TITLE.sub("", cell.source))))
        elif cell.cell_type == "code":
            code += sum(1 for line in cell.source.splitlines()
                        if line.strip() and not line.strip().startswith("#"))
        points += records.points(cell)
    return words, code, points


def estimate(chapter: str, root: Path = REPO) -> Estimate:
    nb = notebooks.read(notebooks.notebook_path(chapter, root, "release"))
    words, code, points = count(nb)
    seconds = runs().get(chapter, {}).get("seconds")
    return Estimate(chapter, words, code, points, seconds)


def title_estimate(chapter: str, root: Path = REPO) -> int | None:
    """The minutes the source notebook's title cell states, or None if it states none in the counted form."""
    nb = notebooks.read(notebooks.notebook_path(chapter, root))
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = TITLE.search(cell.source)
            if m:
                return int(m.group(1))
    return None


def write_title(chapter: str, root: Path = REPO) -> bool:
    """Put the counted estimate into the source notebook's title cell; True if it changed."""
    path = notebooks.notebook_path(chapter, root)
    nb = notebooks.read(path)
    line = estimate(chapter, root).title_line()
    for cell in nb.cells:
        if cell.cell_type == "markdown" and TITLE.search(cell.source):
            new = TITLE.sub(line, cell.source, count=1)
            if new == cell.source:
                return False
            cell.source = new
            nbformat.write(nb, str(path))
            return True
    raise ValueError(f"{chapter}: no '**Time:** about N minutes' in a markdown cell of the source notebook")


def main(chapters: list[str], write: bool = False) -> int:
    rc = 0
    for ch in chapters or notebooks.chapters():
        if write and write_title(ch):
            print(f"{ch}: title cell updated (run `python -m course.grading release {ch}`)")
        e = estimate(ch)
        print(e.describe())
        stated = title_estimate(ch)
        if stated != e.total:
            print(f"  the title says {stated} minutes: run `python -m course.grading estimates --write`")
            rc = 1
    return rc
