"""`python -m course.grading exercise`: one exercise's pieces side by side, for its author."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CHAPTERS
from course.grading.judge import answers
from course.grading.authoring import exercise, notebooks
from course.grading import paths
from course.grading.judge import diagnosis, verdicts
from course.grading.records import exercise_of

CH = "01_dynamic_graphs"


def test_the_listing_names_every_exercise_with_its_points_and_known_answers():
    ex = exercise.exercises(CH)
    nb = notebooks.read(notebooks.notebook_path(CH))
    assert list(ex) == list(answers.solution_cells(nb))
    assert sorted(g for grades in ex.values() for g, _ in grades) == sorted(exercise_of(nb))
    text = exercise.listing(CH)
    mutants = answers.load_variants(CH, "mutant")
    for name, grades in ex.items():
        line = next(line for line in text.splitlines() if line.strip().startswith(name + " "))
        assert f"{sum(p for _, p in grades):g} pts" in line
        assert f"{sum(v.cell == name for v in mutants)} mutants" in line


def test_one_exercise_shows_statement_reference_probes_verdicts_and_every_mutant():
    text = exercise.show(CH, "sgd_step")
    nb = notebooks.read(notebooks.notebook_path(CH))
    reference = answers.strip_markers(answers.solution_cells(nb)["sgd_step"])
    assert "Exercise 1.2" in text.split("Reference solution")[0]           # the statement comes first
    assert all(line in text for line in reference.splitlines() if line.strip())
    judge = __import__("course.grading.judge.verdicts", fromlist=["load"]).load(CH, paths.REPO)
    for gid in (g for g, owner in exercise_of(nb).items() if owner == "sgd_step"):
        assert f"Grade cell {gid} (" in text
        if gid in judge.probes:
            assert judge.probes[gid].source.strip().splitlines()[0] in text  # the hidden probe's def line
    assert text.count("Verdict (runs in the judge):") == sum(
        1 for g, o in exercise_of(nb).items() if o == "sgd_step" and g in judge.probes)
    mine = [v for v in answers.load_variants(CH, "mutant") if v.cell == "sgd_step"]
    assert f"Mutants (wrong answers): {len(mine)}" in text
    for v in mine:
        assert f"\n{v.name} [" in text and ("note: " + v.note) in text and "fails: " + ", ".join(v.fails) in text
    assert "@@" in text  # the mutants as diffs against the reference
    assert "### BEGIN SOLUTION" not in text and "### BEGIN HIDDEN TESTS" not in text


def test_the_command_lists_shows_and_refuses_an_unknown_exercise():
    run = lambda *a: subprocess.run([sys.executable, "-m", "course.grading", "exercise", CH, *a],  # noqa: E731
                                    capture_output=True, text=True, cwd=paths.REPO, timeout=300)
    listing, one, bad = run(), run("pooled_scores"), run("no_such_exercise")
    assert listing.returncode == 0 and "pooled_scores" in listing.stdout and "record_activations" in listing.stdout
    assert one.returncode == 0 and "Reference solution" in one.stdout and "Alternatives (correct answers)" in one.stdout
    assert bad.returncode == 2 and "no exercise 'no_such_exercise'" in bad.stderr and "sgd_step" in bad.stderr


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_exercise_lives_in_one_folder(chapter):
    """``source/<chapter>/exercises/<grade id>/`` per solution cell: its judge.py registers the probes and verdicts
    of that exercise's grade cells and no other, and says WHY the reference is right; its mutants/ (at least four,
    a do-nothing one among them) and alternatives/ (at least one) answer that exercise. Nothing else is there but
    the chapter's profiles; nbgrader's ignore list keeps the folder out of the release."""
    nb = notebooks.read(notebooks.notebook_path(chapter))
    owner = exercise_of(nb)
    folder = verdicts.exercises_dir(chapter, paths.REPO)
    solutions = list(answers.solution_cells(nb))
    assert sorted(p.name for p in folder.iterdir()) == sorted(solutions + [diagnosis.FILE])
    judge = verdicts.load(chapter, paths.REPO)
    assert verdicts.judge_files(chapter, paths.REPO)[1:] == [folder / g / "judge.py" for g in solutions]
    for test, probe in judge.probes.items():
        for what, fn in (("probe", probe.fn), ("verdict", probe.check)):
            home = Path(fn.__code__.co_filename)
            assert home == folder / owner[test] / "judge.py", f"{test}'s {what} is in {home}, not its exercise's folder"
    assert sorted(judge.why) == sorted(solutions)
    variants = [v for kind in ("mutant", "alternative") for v in answers.load_variants(chapter, kind)]
    for g in solutions:
        mine = [v for v in variants if v.cell == g]
        assert sum(v.kind == "mutant" for v in mine) >= 4 and any(v.klass == "do-nothing" for v in mine), g
        assert any(v.kind == "alternative" for v in mine), g
    assert "exercises" in (paths.REPO / "nbgrader_config.py").read_text().split("c.CourseDirectory.ignore")[1].splitlines()[0]
    assert not (paths.REPO / "release" / chapter / "exercises").exists()
