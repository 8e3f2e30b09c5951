"""Typed records of the grading pipeline: what a worker brings back, the report of one submission, and what a
class run produced.

They travel between processes (a local worker, a Dask worker, the nbgrader
process that records grades) as JSON written by :meth:`to_json` and read by
:meth:`from_json`, never as ad-hoc dicts copied field by field. Probe values
travel separately, in the wire format (:mod:`course.grading.run.wire`), and are
read back only with ``torch.load(weights_only=True)``.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade, is_solution

from course.grading.text import one_line, printable

TAMPER_FLAG = "kernel reported pass, judge failed: possible tampering"


def grade_id(cell) -> str | None:
    """The cell's nbgrader grade_id, or ``None`` (never raises on odd metadata)."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    gid = nbg.get("grade_id") if isinstance(nbg, dict) else None
    return gid if isinstance(gid, str) else None


def points(cell) -> float:
    """The points of a grade cell (0 for any other cell)."""
    try:
        return float(cell.metadata.nbgrader.get("points", 0)) if is_grade(cell) else 0.0
    except (AttributeError, TypeError, ValueError):
        return 0.0


def graded_ids(nb) -> list[str]:
    """The grade cells' ids, in notebook order."""
    return [grade_id(c) for c in nb.cells if is_grade(c) and grade_id(c)]


def exercise_of(nb) -> dict[str, str]:
    """Map each grade cell to the solution cell above it (its exercise)."""
    out, current = {}, None
    for c in nb.cells:
        if is_solution(c):
            current = grade_id(c)
        if is_grade(c) and current:
            out[grade_id(c)] = current
    return out


@dataclass
class WorkerResult:
    """What came back from one sandboxed run: the executed notebook, the kernel's own verdicts, the probes' results."""

    notebook: nbformat.NotebookNode
    kernel_status: dict[str, str] = field(default_factory=dict)  # grade_id -> "pass" | "fail" | "not run"
    results: dict[str, dict] = field(default_factory=dict)       # probe test -> record (see wire.loads)
    flags: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    decoy_hits: list[str] = field(default_factory=list)
    sandbox: str = ""
    seconds: float = 0.0
    restarts: int = 0
    peak_memory: int = 0            # bytes, the sandboxed processes at their largest
    judge_peak_memory: int = 0      # bytes, the grading process that ran it (outside the sandbox)
    reference_seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)       # where the time went: phase -> seconds
    skipped: list[int] = field(default_factory=list)             # the demonstration cells not run (their indices)
    raw: dict[str, bytes] = field(default_factory=dict)          # probe test -> the result file's bytes
    by_seed: dict[int, dict[str, dict]] = field(default_factory=dict)  # reference runs: seed -> results

    _META = ("kernel_status", "flags", "events", "decoy_hits", "sandbox", "seconds", "restarts", "peak_memory",
             "judge_peak_memory", "reference_seconds", "phases", "skipped")

    def meta(self) -> dict:
        """Everything but the notebook and the probe values, JSON-ready."""
        return {name: getattr(self, name) for name in self._META}

    @classmethod
    def from_meta(cls, meta: dict, notebook, results: dict[str, dict]) -> "WorkerResult":
        known = {name: meta[name] for name in cls._META if name in meta}
        return cls(notebook=notebook, results=results, **known)


@dataclass
class CellReport:
    """The judge's decision on one grade cell, as the instructor sees it."""

    points: float
    max_points: float
    judge: str          # "pass" or "fail"
    kernel: str         # what the student's kernel reported: "pass", "fail" or "not run"
    message: str = ""
    kind: str = "pass"  # "pass", "check", "probe", "form", "missing"
    detail: str = ""    # for the instructor only
    disagreement: str = ""


@dataclass
class Report:
    """The instructor's report of one submission (``.judge/reports/<chapter>/<student>.json``)."""

    chapter: str
    student: str
    seed: int = 0
    score: float = 0.0
    max_score: float = 0.0
    cells: dict[str, CellReport] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    sandbox: str = ""
    seconds: float = 0.0
    restarts: int = 0
    reference_seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # the sandboxed run's wall time by phase (seconds)
    skipped: list[int] = field(default_factory=list)  # the demonstration cells the grader did not run (indices)
    peak_memory_gib: float = 0.0
    judge_peak_mib: float = 0.0
    graded_at: str = ""
    intake: dict = field(default_factory=dict)   # IntakeReport.to_json()
    repair: dict = field(default_factory=dict)   # {"damaged": [...], "repaired": [...], "file": name}
    #: {solution cell: {"note", "known" (the mutants' names), "score"}}: the known mistake each failing exercise
    #: behaves like (course.grading.judge.diagnosis), as the student's feedback says it
    diagnoses: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Report":
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        kw["cells"] = {k: CellReport(**{f: v for f, v in c.items() if f in CellReport.__dataclass_fields__})
                       for k, c in d.get("cells", {}).items()}
        return cls(**kw)

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: Path) -> "Report | None":
        try:
            return cls.from_json(json.loads(Path(path).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def words(self) -> list[str]:
        """Short flags for the class table."""
        words = []
        text = " ".join(self.flags) + " " + " ".join(self.events)
        if "possible tampering" in text:
            words.append("tampering suspected")
        if "timed out" in text or "wall time" in text:
            words.append("timed out")
        if "kernel died" in text or "exited with code" in text or "died from" in text:
            words.append("crashed")
        if "cap" in text and ("memory" in text or "process" in text or "disk" in text):
            words.append("hit a cap")
        if "output capped" in text or "output refused" in text:
            words.append("output capped")
        if "probe's result" in " ".join(c.message for c in self.cells.values()):
            words.append("result refused")
        if self.intake:
            from course.grading.intake.files import IntakeReport
            words += IntakeReport.from_json(self.intake).words()
        if self.repair.get("damaged"):
            words.append("damaged")
        if self.repair.get("repaired"):
            words.append("repaired")
        if "sandbox degraded" in text:
            words.append("sandbox degraded")
        if any(f.startswith("not graded") for f in self.flags):
            words.append("NOT GRADED")
        return list(dict.fromkeys(words))

    @classmethod
    def not_graded(cls, chapter: str, student: str, why: str, max_score: float = 0.0) -> "Report":
        return cls(chapter=chapter, student=student, max_score=max_score, flags=[f"not graded: {one_line(why)}"],
                   graded_at=time.strftime("%Y-%m-%d %H:%M:%S"))


def clean_lines(lines, limit: int = 600) -> list[str]:
    """Printable, capped copies of lines that may hold student text (flags, events)."""
    return [printable(x, limit) for x in lines]


@dataclass
class ClassResult:
    """What a class run produced (:func:`course.grading.classroom.pipeline.grade_class`): a report per chapter and
    student, what went wrong, and where the time went."""

    reports: dict[str, dict[str, Report]] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    graded: list[tuple[str, str]] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)
    analysis: dict[str, tuple[Path, Path]] = field(default_factory=dict)  # chapter -> (html, csv)
