"""Misconception diagnosis: a failing answer's verdicts matched to the known mistakes of its exercise.

Every known wrong answer (a mutant, ``source/<chapter>/exercises/<grade id>/mutants/*.py``) carries a ``NOTE`` for students: the
misconception it makes, never the hidden test. Its **profile** is what the judge decides on it, per seed: for
each grade cell of its exercise that it fails, the code of the failing check (:attr:`~course.grading.judge.verdicts.
Verdict.code`: the verdict's line in ``judge.py`` that raised, the exception the code raised in the probe, a
result of the wrong form, or none at all). ``python -m course.grading profiles CHAPTER`` (``make profiles``)
computes the profiles of every mutant through the judge's own probes and verdicts, in one process
(:func:`course.grading.authoring.sweep.variants`), and writes them beside the mutants, keyed by the judge, the reference
and the mutants' code; the test run checks that key and recomputes each profile at a fresh seed.

When a submission fails a cell, its profile on each exercise is compared with the known ones of that exercise
(:func:`similarity`: a cell failed with the same check counts 1, with another check 1/2, failed by only one of the
two 0, over the cells either fails). The nearest known mistakes decide: at or above :data:`THRESHOLD`, and when all
of the nearest share one note, the student's feedback says "Your answer behaves like a known mistake: <note>".
Otherwise it says nothing, so an answer is never told a mistake it may not make.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

#: The least similarity (see :func:`similarity`) at which a known mistake is named in a student's feedback.
THRESHOLD = 0.75
PREFIX = "Your answer behaves like a known mistake: "
FILE = "profiles.json"
#: The form of the verdicts' codes (course.grading.judge.verdicts._check_code); part of the profiles' key.
CODES = 2


@dataclass(frozen=True)
class Known:
    """A known mistake of one exercise: its mutant's name, note and profiles (one per seed)."""

    name: str
    cell: str
    note: str
    blind: bool
    profiles: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class Diagnosis:
    """What a failing answer to one exercise behaves like: a note, the known mistakes behind it, how near."""

    cell: str
    note: str
    known: tuple[str, ...]
    score: float


@dataclass
class Catalogue:
    """The known mistakes of one chapter, loaded with :func:`load`; empty (and ``why`` says why) when the profiles
    are missing or stale, so that grading goes on without diagnosis."""

    chapter: str
    known: list[Known] = field(default_factory=list)
    why: str = ""
    said: bool = False  # ``why`` was logged (once per process)

    def diagnose(self, failed: dict[str, str], exercise: dict[str, str]) -> dict[str, Diagnosis]:
        return diagnose(failed, exercise, self.known)


def profile(verdicts) -> dict[str, str]:
    """{grade cell: the failing check's code} of a submission's verdicts (passed cells left out)."""
    return {t: (v.code or v.kind) for t, v in verdicts.items() if not v.passed}


def similarity(a: dict[str, str], b: dict[str, str], tests: set[str] | frozenset[str]) -> float:
    """How alike two profiles are on ``tests``: over the cells that either fails, 1 for the same check, 1/2 for
    another check of the same cell, 0 for a cell only one of them fails (0.0 when neither fails any)."""
    a = {t: c for t, c in a.items() if t in tests}
    b = {t: c for t, c in b.items() if t in tests}
    union = set(a) | set(b)
    if not union:
        return 0.0
    return sum(1.0 if a.get(t) == b.get(t) else 0.5 if t in a and t in b else 0.0 for t in union) / len(union)


def specific(p: dict[str, str], tests) -> bool:
    """Whether a known mistake's profile says enough to name it: at least one failed check of a verdict, a result
    of the wrong form, or the stub's NotImplementedError. An exception alone (``probe:RuntimeError``) is what
    many unrelated bugs raise: such a profile never names its note."""
    return any(not c.startswith("probe") or c == "probe:NotImplementedError" for t, c in p.items() if t in tests)


def diagnose(failed: dict[str, str], exercise: dict[str, str], known: list[Known],
             threshold: float = THRESHOLD) -> dict[str, Diagnosis]:
    """{solution cell: diagnosis} for each exercise where ``failed`` (a profile) fails a cell and the nearest known
    mistakes of that exercise are at least ``threshold`` alike and share one note."""
    out = {}
    for cell in sorted({exercise[t] for t in failed if t in exercise}):
        tests = frozenset(t for t, c in exercise.items() if c == cell)
        scored = [(max((similarity(failed, p, tests) for p in k.profiles if specific(p, tests)), default=0.0), k)
                  for k in known if k.cell == cell and k.note]
        if not scored:
            continue
        top = max(s for s, _ in scored)
        nearest = [k for s, k in scored if s == top]
        notes = {k.note for k in nearest}
        if top >= threshold and len(notes) == 1:
            out[cell] = Diagnosis(cell, notes.pop(), tuple(sorted(k.name for k in nearest)), round(top, 3))
    return out


def path(chapter: str, root: Path) -> Path:
    """``source/<chapter>/exercises/profiles.json``: every mutant's profile, beside the exercises."""
    return Path(root) / "source" / chapter / "exercises" / FILE


def key(chapter: str, root: Path) -> str:
    """What the profiles depend on: the judge's probes, the reference's setup and solution cells, every mutant's
    exercise and code. The notes are not in it (they are read from the mutants when grading)."""
    from course.grading.judge.verdicts import load as load_judge
    from course.grading.judge.answers import load_variants
    from course.grading.judge.references import reference_cells, reference_notebook

    from course import checks
    from course.grading.judge import verdicts as judge
    from course.grading.run import wire

    # the codes are lines of the verdicts (judge.py) and of course.checks, and exception names as the wire passes them
    h = hashlib.sha256(f"codes v{CODES}\0".encode() + load_judge(chapter, root).fingerprint().encode())
    for source in (*judge.judge_files(chapter, root), Path(checks.__file__), Path(wire.__file__)):
        h.update(b"\0file\0" + Path(source).read_bytes())
    for _, gid, source in reference_cells(reference_notebook(chapter, root)):
        h.update(b"\0cell\0" + gid.encode() + b"\0" + source.encode())
    for v in sorted(load_variants(chapter, "mutant", root), key=lambda v: v.name):
        h.update(b"\0mutant\0" + "\0".join((v.name, v.cell, v.source, ",".join(v.fails))).encode())
    return h.hexdigest()[:20]


def save(chapter: str, root: Path, seeds: list[int], profiles: dict[str, list[dict[str, str]]]) -> Path:
    out = path(chapter, root)
    data = {"chapter": chapter, "key": key(chapter, root), "seeds": list(seeds),
            "profiles": {name: profiles[name] for name in sorted(profiles)}}
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return out


_CACHE: dict[tuple[str, str], Catalogue] = {}


def load(chapter: str, root: Path) -> Catalogue:
    """The chapter's known mistakes with their notes and saved profiles (cached per process). Missing or stale
    profiles give an empty catalogue whose ``why`` says what to run."""
    root = Path(root).resolve()
    if (chapter, str(root)) in _CACHE:
        return _CACHE[(chapter, str(root))]
    from course.grading.judge.answers import load_variants

    cat = Catalogue(chapter)
    try:
        data = json.loads(path(chapter, root).read_text())
        if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
            raise ValueError("not a profiles file")
    except (OSError, ValueError):
        cat.why = f"no profiles of {chapter}'s known mistakes (run `make profiles`)"
    else:
        if data.get("key") != key(chapter, root):
            cat.why = (f"{chapter}'s mutant profiles are stale: the judge, the reference or a mutant changed "
                       "(run `make profiles`)")
        else:
            saved = data.get("profiles", {})
            cat.known = [Known(v.name, v.cell, v.note, v.blind, tuple(saved[v.name]))
                         for v in load_variants(chapter, "mutant", root) if v.name in saved]
    _CACHE[(chapter, str(root))] = cat
    return cat


@dataclass
class Evaluation:
    """How the diagnosis does on the known mistakes themselves, each at a seed its saved profiles do not hold."""

    held_in: dict[str, str] = field(default_factory=dict)  # mutant -> "right", "wrong" or "silent"
    blind: dict[str, str] = field(default_factory=dict)    # blind mutant, against the authored ones only
    wrong: list[str] = field(default_factory=list)         # "name: diagnosed as <names>"

    @staticmethod
    def _rates(d: dict[str, str]) -> str:
        n = len(d) or 1
        return ", ".join(f"{sum(1 for v in d.values() if v == k)} {k} ({100 * sum(1 for v in d.values() if v == k) / n:.0f}%)"
                         for k in ("right", "wrong", "silent"))

    def summary(self) -> str:
        return (f"diagnosis of {len(self.held_in)} mutants at a fresh seed: {self._rates(self.held_in)}; "
                f"{len(self.blind)} blind answers against the authored mutants only: {self._rates(self.blind)}")


def _outcome(me: Known, profiles: list[dict[str, str]], exercise: dict[str, str], pool: list[Known],
             wrong: list[str] | None) -> str:
    seen = []
    for p in profiles:
        d = diagnose(p, exercise, pool).get(me.cell)
        seen.append("silent" if d is None else "right" if d.note == me.note else "wrong")
        if seen[-1] == "wrong" and wrong is not None:
            wrong.append(f"{me.name}: diagnosed as {', '.join(d.known)}")
    return "wrong" if "wrong" in seen else "silent" if "silent" in seen else "right"


def evaluate(catalogue: Catalogue, fresh: dict[str, list[dict[str, str]]], exercise: dict[str, str]) -> Evaluation:
    """Diagnose each mutant's ``fresh`` profiles (seeds other than the saved ones): "right" when named with its own
    note, "wrong" with another note, "silent" when the feedback would say nothing. Blind answers are also
    diagnosed against the authored mutants alone, as if they had never been adopted."""
    ev = Evaluation()
    by_name = {k.name: k for k in catalogue.known}
    authored = [k for k in catalogue.known if not k.blind]
    for name, profiles in sorted(fresh.items()):
        me = by_name.get(name)
        if me is None:
            continue
        ev.held_in[name] = _outcome(me, profiles, exercise, catalogue.known, ev.wrong)
        if me.blind:
            ev.blind[name] = _outcome(me, profiles, exercise, authored, None)
    return ev


def cross_check(chapter: str, root: Path) -> Evaluation | None:
    """:func:`evaluate` on the saved profiles alone: each mutant's later seeds against a catalogue of the first
    seed's (None with fewer than two seeds saved, or stale profiles)."""
    from course.grading.records import exercise_of
    from course.grading.judge.references import reference_notebook

    cat = load(chapter, root)
    if not cat.known or min(len(k.profiles) for k in cat.known) < 2:
        return None
    first = Catalogue(chapter, [Known(k.name, k.cell, k.note, k.blind, k.profiles[:1]) for k in cat.known])
    return evaluate(first, {k.name: list(k.profiles[1:]) for k in cat.known},
                    exercise_of(reference_notebook(chapter, root)))
