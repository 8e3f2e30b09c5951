"""Grade answers written blind (from the release alone) through the judge, and say which ones it catches.

    python tools/blind.py CHAPTER ANSWERS_DIR [--adopt]

``ANSWERS_DIR`` holds files in the mutant format plus ``KIND`` (``correct`` for a correct answer) and
``VIOLATES``. Each is graded through the real pipeline (one answer per exercise per submission, the other
exercises answered with the reference). A wrong answer must lose at least one grade cell of its exercise; a
correct one must keep every cell. With ``--adopt``, each caught wrong answer is copied into
``source/CHAPTER/exercises/<grade id>/mutants/blind_<name>.py`` with ``FAILS`` set to what it lost, and each
correct one that keeps full marks into ``source/CHAPTER/exercises/<grade id>/alternatives/blind_<name>.py``.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.grading.judge import answers as known_answers  # noqa: E402
from course.grading.authoring import notebooks, trial  # noqa: E402
from course.grading.records import exercise_of  # noqa: E402


def load(folder: Path) -> list[dict]:
    out = []
    for path in sorted(Path(folder).glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_blind_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out.append({"name": path.stem, "cell": mod.CELL, "kind": getattr(mod, "KIND", ""),
                    "source": known_answers.textwrap_dedent(mod.SOURCE), "doc": (mod.__doc__ or "").strip().splitlines()[0],
                    "violates": getattr(mod, "VIOLATES", "")})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("chapter")
    p.add_argument("answers", type=Path)
    p.add_argument("--adopt", action="store_true")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--fast", action="store_true", help="in one process, through the judge's probes and verdicts "
                                                       "(python -m course.grading variants), not a notebook each")
    args = p.parse_args(argv)
    answers = load(args.answers)
    source = notebooks.read(notebooks.notebook_path(args.chapter))
    cells_of = {}
    for gid, sol in exercise_of(source).items():
        cells_of.setdefault(sol, []).append(gid)
    groups: list[list[dict]] = []
    for a in answers:
        slot = next((g for g in groups if all(x["cell"] != a["cell"] for x in g)), None)
        if slot is None:
            groups.append([a])
        else:
            slot.append(a)
    subs = [trial.Submission(f"blind-{i}", {a["cell"]: a["source"] for a in g}, variants=[a["name"] for a in g])
            for i, g in enumerate(groups, 1)]
    if args.fast:
        from course.grading.authoring import sweep
        report = sweep.variants(args.chapter, REPO, sweep.sweep_seeds(2, key=b"variants"),
                                names=[], extra=[known_answers.Variant(a["name"], "blind", a["cell"], a["source"], (), a["doc"])
                                                 for a in answers])
        lost_of = {a["name"]: sorted(set(report.lost[a["name"]]) & set(cells_of.get(a["cell"], []))) for a in answers}
    else:
        graded = trial.grade(args.chapter, subs, jobs=args.jobs)
    caught = missed = 0
    for sub, group in zip(subs, groups):
        for a in group:
            if args.fast:
                lost = lost_of[a["name"]]
            else:
                scores = graded.scores.get(sub.student, {})
                lost = sorted(c for c in cells_of.get(a["cell"], [])
                              if scores.get(c, (0, 1))[0] < scores.get(c, (0, 1))[1])
            if a["kind"] == "correct":
                verdict = "OK (full marks)" if not lost else f"WRONGLY FAILED {lost}"
            else:
                verdict = f"caught: {lost}" if lost else "MISSED: keeps full marks"
                caught += bool(lost)
                missed += not lost
            print(f"{a['name']:<32} {a['cell']:<24} {verdict}   ({a['doc'][:70]})")
            if args.adopt and ((a["kind"] == "correct" and not lost) or (a["kind"] != "correct" and lost)):
                kind = "mutants" if a["kind"] != "correct" else "alternatives"
                dest = REPO / "source" / args.chapter / "exercises" / a["cell"] / kind / f"blind_{a['name']}.py"
                dest.parent.mkdir(parents=True, exist_ok=True)
                body = f'"""{a["doc"] or a["name"]} (written blind, from the release alone)."""\nCELL = {a["cell"]!r}\n'
                if kind == "mutants":
                    body += f"KIND = {a['kind'] or 'wrong-value'!r}\nFAILS = {lost!r}\n"
                body += f"SOURCE = '''\n{a['source']}'''\n"
                dest.write_text(body)
    print(f"{args.chapter}: {caught} wrong answers caught, {missed} missed, of {caught + missed}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
