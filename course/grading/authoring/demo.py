"""The demo class (``make grade``): every chapter's reference, wrong answers and damaged notebooks graded into ``.demo/``, with grades.csv."""
from __future__ import annotations

import csv
import os
import shutil
import time
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade, is_solution

from course.grading import paths
from course.grading.authoring.notebooks import chapters, notebook_path, read
from course.grading.authoring.trial import Graded, Submission, build_notebook, plan, problems, read_scores, table
from course.grading.nbgrader import wrapper as nbgrader_io


DEMO_DB = Path(".demo") / "gradebook.db"


DEMO_WRONG = 3  # students with wrong answers per chapter in the demo class (each holds one mutant per exercise)


def demo_class(root: Path, assignment: str, wrong: int = DEMO_WRONG) -> list[Submission]:
    """The demo class of one chapter: the reference, the untouched release, and ``wrong`` students with wrong
    answers (the first mutant groups; ``python -m course.grading check`` grades them all)."""
    subs = [s for s in plan(assignment, root, tamper=False, depth=wrong) if not s.student.startswith("alternatives")]
    names = {"solution": "demo-full-marks", "empty": "demo-empty"}
    for sub in subs:
        sub.student = names.get(sub.student, "demo-" + sub.student.replace("mutants", "wrong"))
    return subs


def demo(root: Path = paths.REPO, only: list[str] | None = None, jobs: int = 0, log=print, wrong: int = DEMO_WRONG) -> int:
    """``make grade``: regenerate release/, grade a demo class in submitted/ with ``grade-class``, write grades.csv.

    Uses its own gradebook (``.demo/gradebook.db``, git-ignored), so the instructor's ``gradebook.db`` is never
    touched; ``nbgrader_config.py`` points nbgrader at it while ``COURSE_GRADEBOOK_URL`` says so (``make instructor
    GRADEBOOK=.demo/gradebook.db`` shows it in Formgrader; ``make feedback-demo`` writes its feedback).
    Every chapter is generated; ``only`` limits which chapters get a graded demo class. Says what it will cost
    before it starts, and shows progress.
    """
    from course.grading.classroom import pipeline

    root = Path(root).resolve()
    (root / ".demo").mkdir(exist_ok=True)
    db = root / DEMO_DB
    if db.exists():
        db.unlink()
    db_url = nbgrader_io.sqlite(db)
    todo = only or chapters(root)
    classes = {a: demo_class(root, a, wrong) for a in todo}
    n = sum(len(v) for v in classes.values())
    jobs = jobs or os.cpu_count() or 1
    log(f"make grade: {n} demo submissions over {len(todo)} chapter(s), graded through the judge with {jobs} "
        f"process(es). Expect about {max(1, round(n * 25 / jobs / 60))} to {max(2, round(n * 60 / jobs / 60))} "
        f"minutes on 2 cores (each submission runs in its own sandbox: 10 to 60 s of CPU).", flush=True)
    for assignment in chapters(root):
        nbgrader_io.generate(root, assignment, db_url)
    status = 0
    rows = []
    for assignment in todo:
        t0 = time.perf_counter()
        source_nb = notebook_path(assignment, root)
        source, release_nb = read(source_nb), read(root / "release" / assignment / source_nb.name)
        subs = classes[assignment]
        for sub in subs:
            dest = root / "submitted" / sub.student / assignment
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            nbformat.write(build_notebook(release_nb, source, sub.replacements, sub.base), str(dest / source_nb.name))
        log(f"\n== {assignment}: {len(subs)} submissions", flush=True)
        result = pipeline.grade_class(root, [assignment], jobs=jobs, force=True, db_url=db_url, progress=True,
                                      only=[s.student for s in subs], log=lambda *a, **k: None)
        graded = Graded(course=root, scores=read_scores(db, assignment, source_nb.stem), seconds={}, submissions=subs)
        log(f"== {assignment} ({time.perf_counter() - t0:.0f} s)")
        for s in subs:
            log(f"   {s.student:<18} {', '.join(s.variants) or ('the reference solutions' if s.replacements == {} else 'the untouched release')}")
        log(table(graded))
        bad = problems(graded)
        for line in bad:
            log("   PROBLEM:", line)
        status |= bool(bad)
        for student, cells in graded.scores.items():
            for cell, (score, maximum) in sorted(cells.items()):
                rows.append({"assignment": assignment, "student": student, "grade_cell": cell,
                             "score": score, "max_score": maximum})
    with open(root / "grades.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["assignment", "student", "grade_cell", "score", "max_score"])
        writer.writeheader()
        writer.writerows(rows)
    log(f"\nwrote {root / 'grades.csv'} ({len(rows)} rows) and autograded/; gradebook: {db}\n"
        f"Feedback for the demo class: COURSE_GRADEBOOK_URL={db_url} nbgrader generate_feedback CHAPTER "
        f"(or `make feedback-demo`)")
    return status


def _solution_nb(course: Path, assignment: str, release_dir: Path) -> dict:
    import json
    sub = Submission("x", {})
    nb = build_notebook(read(release_dir / notebook_path(assignment, course).name),
                        read(notebook_path(assignment, course)), sub.replacements)
    return json.loads(nbformat.writes(nb))


def write_damaged(course: Path, assignment: str, release_dir: Path) -> dict[str, tuple[str, bool]]:
    """Write one damaged copy of the reference solutions per kind of damage into ``submitted/damaged-<kind>/``.

    Returns ``{student: (what was done, whether full marks are expected after repair)}``.
    """
    import json
    import random as _random

    name = notebook_path(assignment, course).name
    base = _solution_nb(course, assignment, release_dir)
    cells = base["cells"]
    sol_idx = [i for i, c in enumerate(cells) if is_solution(nbformat.from_dict(c))]
    test_idx = [i for i, c in enumerate(cells) if is_grade(nbformat.from_dict(c))]
    out: dict[str, tuple[str, bool]] = {}

    def put(student: str, nb_or_text, what: str, full: bool, filename: str = name) -> None:
        d = course / "submitted" / student / assignment
        d.mkdir(parents=True, exist_ok=True)
        text = nb_or_text if isinstance(nb_or_text, str) else json.dumps(nb_or_text, indent=1)
        (d / filename).write_text(text)
        out[student] = (what, full)

    def copy():
        return json.loads(json.dumps(base))

    put("damaged-invalid-json", json.dumps(base)[: len(json.dumps(base)) // 2], "truncated JSON", False)
    put("damaged-renamed", copy(), "saved as 'name (1).ipynb'", True, filename=name.replace(".ipynb", " (1).ipynb"))
    nb = copy()
    del nb["cells"][test_idx[0]]
    put("damaged-deleted-cells", nb, "a test cell deleted", True)
    nb = copy()
    nb["cells"].insert(sol_idx[0] + 1, json.loads(json.dumps(nb["cells"][sol_idx[0]])))
    nb["cells"].insert(test_idx[-1] + 2, json.loads(json.dumps(nb["cells"][test_idx[-1] + 1])))
    put("damaged-duplicated-cells", nb, "a solution cell and a test cell duplicated", True)
    nb = copy()
    c = nb["cells"][sol_idx[0]]
    c["cell_type"] = "markdown"
    c.pop("outputs", None)
    c.pop("execution_count", None)
    put("damaged-retyped-cell", nb, "a solution cell turned into markdown", True)
    nb = copy()
    first_md = max(i for i in range(sol_idx[0]) if nb["cells"][i]["cell_type"] == "markdown")
    block = nb["cells"][first_md:sol_idx[1]] if len(sol_idx) > 1 else []
    if block:
        rest = nb["cells"][:first_md] + nb["cells"][sol_idx[1]:]
        nb["cells"] = rest[:-2] + block + rest[-2:]
    put("damaged-reordered-cells", nb, "the first exercise moved to the end", True)
    nb = copy()
    for i in sol_idx:
        nb["cells"][i]["metadata"]["nbgrader"]["grade_id"] += "-renamed"
    put("damaged-changed-grade-ids", nb, "every solution cell's grade_id changed", True)
    nb = copy()
    for c in nb["cells"]:
        c["metadata"] = {}
        c.pop("id", None)
    nb["nbformat_minor"] = 4
    put("damaged-stripped-metadata", nb, "all cell metadata and ids stripped (as some editors do)", True)
    nb = copy()
    rng = _random.Random(0)
    blob = "".join(rng.choice("abcdef0123456789") for _ in range(1024)) * (60 * 1024)
    nb["cells"][sol_idx[0] - 1 if cells[sol_idx[0] - 1]["cell_type"] == "code" else sol_idx[0]]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": blob}]
    put("damaged-huge-outputs", nb, "60 MiB of output saved in the notebook", True)
    return out
