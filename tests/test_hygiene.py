"""Source notebooks are committed clean, and their nbgrader metadata is complete."""
import json
import re

import pytest

from conftest import CHAPTERS, REPO
from course.grading.judge import answers
from course.grading.authoring import notebooks
from course.grading import records
from course.grading.judge import verdicts as judging
from tools.nbtool import HIDDEN_CALL

SOURCES = {ch: notebooks.notebook_path(ch) for ch in CHAPTERS}
EXPECTED_CHAPTERS = ["01_dynamic_graphs", "02_autograd", "03_torchscript", "04_ecosystem",
                     "05_engineering_traps", "05b_distributed", "06_torch_compile"]


def test_chapters_exist():
    assert CHAPTERS, "no chapters under source/"
    assert set(CHAPTERS) <= set(EXPECTED_CHAPTERS), f"unexpected chapter folders: {set(CHAPTERS) - set(EXPECTED_CHAPTERS)}"
    assert "01_dynamic_graphs" in CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_source_is_clean(chapter):
    raw = json.loads(SOURCES[chapter].read_text())
    assert raw["metadata"]["kernelspec"]["name"] == "python3"
    assert "widgets" not in raw["metadata"], "widget state must not be committed"
    for i, cell in enumerate(raw["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {i} has outputs"
            assert cell["execution_count"] is None, f"cell {i} has an execution count"
        assert "widgets" not in cell.get("metadata", {})


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_nbgrader_metadata(chapter):
    nb = notebooks.read(SOURCES[chapter])
    ids = [records.grade_id(c) for c in nb.cells if records.grade_id(c)]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids: {sorted({i for i in ids if ids.count(i) > 1})}"
    for gid in ids:
        assert re.fullmatch(r"[a-z0-9_\-]+", gid), f"grade_id {gid!r} is not a slug"
    graded = answers.graded_cells(nb)
    assert graded, "a chapter must have graded cells"
    assert all(points > 0 for points in graded.values()), f"grade cells without points: {graded}"
    sols = answers.solution_cells(nb)
    assert sols, "a chapter must have exercises"
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            assert meta.get("locked") is True, f"{meta['grade_id']} must be locked"
            assert cell.source.lstrip().startswith('"""'), f"{meta['grade_id']} must open with a docstring"
            hidden = re.findall(r"^### BEGIN HIDDEN TESTS\n(.*?)\n### END HIDDEN TESTS$", cell.source, re.M | re.S)
            assert hidden == [HIDDEN_CALL.format(grade_id=meta["grade_id"])], (
                f"{meta['grade_id']}: the hidden region must be exactly the one-line call into judge.py "
                f"(tools.nbtool.judge_hidden_region); the hidden test itself lives in source/{chapter}/judge.py")
            assert cell.source.rstrip().endswith("### END HIDDEN TESTS"), f"{meta['grade_id']}: hidden region must end the cell"
        if meta.get("solution"):
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
    setup = [c for c in nb.cells if records.grade_id(c) == "setup"]
    assert setup and setup[0].metadata["nbgrader"]["locked"], "the setup cell must exist and be locked"
    assert "from course import checks" in setup[0].source, "the setup cell imports course.checks before student code"
    first_solution = next(i for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    assert nb.cells.index(setup[0]) < first_solution


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_tests_use_course_checks_not_bare_asserts(chapter):
    nb = notebooks.read(SOURCES[chapter])
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            code = cell.source
            assert not re.search(r"^\s*assert\s", code, re.M), f"{records.grade_id(cell)}: use course.checks, not assert"
            for banned in ("torch.allclose(", "torch.equal(", "assert_close("):
                assert banned not in code, f"{records.grade_id(cell)} uses {banned}, which a student can replace"


# The classes of mistake a mutant's ``KIND`` names (CONVENTIONS.md, "Mutants from every class of mistake").
MISTAKE_KINDS = {
    "wrong-value",   # a wrong formula, reduction, dim, sign or constant
    "edge-case",     # an ignored argument, size 0/1, None, another dtype or rank
    "graph",         # a missing or extra detach / no_grad / zero_grad / requires_grad
    "mutation",      # changes an input or a caller's state it must not touch
    "state",         # state that leaks across calls, or a result that depends on call order
    "overfit",       # works only on the demonstrated case (hard-coded constants, the chapter's model)
    "contract",      # the wrong return type, or an API the statement rules out
    "do-nothing",    # an empty list, the identity, zero, `pass`, the input returned: must score 0
}


def exercises(nb) -> dict[str, list[str]]:
    """{solution grade_id: the grade cells that follow it, up to the next solution cell}."""
    out: dict[str, list[str]] = {}
    current = None
    for c in nb.cells:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            current = meta["grade_id"]
            out[current] = []
        elif meta.get("grade") and current is not None:
            out[current].append(meta["grade_id"])
    return out


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_exercises_have_known_answers(chapter):
    """Per exercise: 4+ wrong answers from 3+ classes of mistake, a do-nothing answer that loses every grade
    cell of the exercise, and a different correct answer."""
    nb = notebooks.read(SOURCES[chapter])
    mutants = answers.load_variants(chapter, "mutant")
    alternatives = answers.load_variants(chapter, "alternative")
    for v in mutants:
        assert v.klass in MISTAKE_KINDS, (f"{chapter}/{v.name}: KIND = {v.klass!r}; say which class of mistake it "
                                          f"is, one of {sorted(MISTAKE_KINDS)}")
    for cell, tests in exercises(nb).items():
        mine = [v for v in mutants if v.cell == cell]
        wrong = [v for v in mine if v.klass != "do-nothing"]
        kinds = {v.klass for v in wrong}
        assert len(wrong) >= 4, f"{chapter}: exercise {cell} has {len(wrong)} wrong answers, needs at least 4"
        assert len(kinds) >= 3, f"{chapter}: exercise {cell}'s wrong answers come from {sorted(kinds)}: use 3+ classes"
        lazy = [v for v in mine if v.klass == "do-nothing"]
        assert lazy, f"{chapter}: exercise {cell} has no do-nothing mutant (KIND = 'do-nothing')"
        for v in lazy:
            assert set(tests) <= set(v.fails), (f"{chapter}/{v.name}: a do-nothing answer must lose every grade cell "
                                                f"of {cell}; FAILS misses {sorted(set(tests) - set(v.fails))}")
        assert any(v.cell == cell for v in alternatives), f"{chapter}: exercise {cell} has no alternative correct answer"
    for v in mutants + alternatives:
        assert v.description and v.description != v.name, f"{v.name}: give it a one-line docstring"


# A measured figure: a number with a unit of time, size, ratio or share.
_UNIT = r"(?:ns|µs|us|ms|s|sec|seconds?|min|minutes?|h|hours?|KiB|MiB|GiB|TiB|KB|MB|GB|kB|bytes|B|%|x|×|img/s|it/s)"
FIGURE = re.compile(r"(?<![\w.])[-+~≈]?\d[\d,]*(?:\.\d+)?\s?" + _UNIT + r"(?![\w/])")
# How a line says that its figures are not this reader's measurements: a quoted reference value with its
# source, visible to the reader, or (for settings, sizes of inputs and time estimates) an author's note.
FIGURE_MARKS = re.compile(r"\(quoted[^)]*\)|<!--\s*not measured:[^>]*-->", re.I)
# A title's time estimate counted by course.grading.authoring.estimates (test_time_estimate_is_counted checks its figures).
COUNTED_ESTIMATE = re.compile(r"\*\*Time:\*\* about \d+ minutes, counted: ")


def unmarked_figures(markdown: str) -> list[str]:
    """The measured-looking figures of a markdown cell on lines that do not mark them as quoted or not measured."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`|<code>.*?</code>", "", text)
    out = []
    for line in text.splitlines():
        if FIGURE_MARKS.search(line) or COUNTED_ESTIMATE.search(line):
            continue
        out += [f"{m.group().strip()!r} in: {line.strip()[:120]}" for m in FIGURE.finditer(line)]
    return out


def test_unmarked_figures_finds_figures():
    assert unmarked_figures("The compiled step took 12.5 ms, 1.8x faster.") != []
    assert unmarked_figures("It used 834 KiB, +14% over the baseline.") != []
    assert unmarked_figures("The article reports 1.8x (quoted: the article, section 6).") == []
    assert unmarked_figures("buckets of 25 MiB by default <!-- not measured: a documented default -->") == []
    assert unmarked_figures("Exercise 1.2 (3 points), 2 cores, `x.sum()` took `5 ms` ```\n1 s\n```") == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_figures_in_prose_are_printed_by_cells(chapter):
    """A measured figure typed into markdown is a claim nobody re-runs: print it from the cell that measures it,
    or mark the line `(quoted: SOURCE)` for a reference value, or `<!-- not measured: WHY -->` for a setting."""
    nb = notebooks.read(SOURCES[chapter])
    found = [f"cell {i}: {f}" for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
             for f in unmarked_figures(c.source)]
    assert not found, f"{len(found)} figure(s) typed into markdown:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_time_estimate_is_counted(chapter):
    """The title's time is reading (counted words and code lines) + the measured run + the exercises' points, as
    course.grading.authoring.estimates counts them from the release: never a typed guess, and never stale."""
    from course.grading.authoring import estimates
    e = estimates.estimate(chapter)
    print(e.describe())
    assert e.run_seconds is not None, f"{chapter}: no measured run; `python -m course.grading run {chapter} --record`"
    assert estimates.title_estimate(chapter) == e.total, (
        f"{chapter}: the title says {estimates.title_estimate(chapter)} minutes, the count gives {e.total}: "
        f"`python -m course.grading estimates --write` then `python -m course.grading release`")
    release = notebooks.read(notebooks.notebook_path(chapter, REPO, "release"))
    assert any(e.title_line() in c.source for c in release.cells if c.cell_type == "markdown"), \
        f"{chapter}: the release's title cell is stale: `python -m course.grading release {chapter}`"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_has_no_solutions_or_hidden_tests(chapter):
    source = notebooks.read(SOURCES[chapter])
    release = notebooks.read(notebooks.notebook_path(chapter, REPO, "release"))
    secret, public = set(), set()
    for cell in source.cells:
        inside = False
        for line in cell.source.splitlines():
            if re.match(r"\s*### BEGIN (SOLUTION|HIDDEN TESTS)", line):
                inside = True
                continue
            if re.match(r"\s*### END (SOLUTION|HIDDEN TESTS)", line):
                inside = False
                continue
            (secret if inside else public).add(line.strip())
    only_secret = {line for line in secret - public if len(line) > 3}
    text = "\n".join(c.source for c in release.cells)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    leaked = sorted(line for c in release.cells for line in (l.strip() for l in c.source.splitlines())
                    if line in only_secret)
    assert not leaked, f"release lines that exist only in solution/hidden regions of the source: {leaked[:5]}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_judge_covers_every_grade_cell(chapter):
    """source/<chapter>/judge.py has exactly one probe, with a verdict, per grade cell."""
    nb = notebooks.read(SOURCES[chapter])
    j = judging.load(chapter, REPO)
    judging.check_coverage(j, list(answers.graded_cells(nb)), chapter)
    for test, probe in j.probes.items():
        assert probe.check is not None, f"{test}: no verdict"
        assert probe.source.startswith("def "), f"{test}: the probe must be a plain def"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_release_has_no_judge(chapter):
    """The hidden tests never reach the student's folder."""
    release = REPO / "release" / chapter
    assert not (release / "judge.py").exists()
    text = "\n".join(p.read_text(errors="replace") for p in release.rglob("*") if p.is_file())
    assert "hidden_test(" not in text and "judge.probe" not in text


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_student_view_cells(chapter):
    """Test and solution cells are tagged raises-exception (Run All runs on), and the chapter ends with the progress cell."""
    nb = notebooks.read(SOURCES[chapter])
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            assert "raises-exception" in cell.metadata.get("tags", []), f"{meta['grade_id']}: tag raises-exception"
    last = nb.cells[-1]
    assert records.grade_id(last) == "progress" and f'summary("{chapter}")' in last.source


# Exercises whose answer can still be read on the page, each with the issue that deepens or replaces it.
# The list only shrinks: an exercise on it that falls within the limit fails until it is taken off.
ANSWER_ON_PAGE_OPEN: dict[str, int] = {}  # every exercise is within the limit (issues 28 and 29, item 1)


@pytest.fixture(scope="module")
def idioms():
    from course.grading.authoring import onpage
    return onpage.idioms()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_answer_is_not_on_the_page(chapter, idioms):
    """At most a third of each reference's code lines can be read in the release notebook or course/*.py."""
    from course.grading.authoring import onpage
    report, wrong = [], []
    for item in onpage.shares(chapter, common=idioms):
        report.append(item.describe())
        over = item.share > onpage.LIMIT
        if item.exercise in ANSWER_ON_PAGE_OPEN and not over:
            wrong.append(f"{item.exercise} is within the limit now ({item.share:.0%}): take it off ANSWER_ON_PAGE_OPEN")
        elif item.exercise not in ANSWER_ON_PAGE_OPEN and over:
            wrong.append(f"{item.exercise}: {item.share:.0%} of the reference is on the page")
    print("\n".join(report))
    assert not wrong, "\n".join(wrong + report)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_rebuttal_of_the_course_s_own_editions(chapter):
    """A student never saw earlier editions of the course: a Myth check answers the article or folklore, and no
    cell talks about what an earlier edition said or what this one changed."""
    nb = notebooks.read(SOURCES[chapter])
    said = [i for i, c in enumerate(nb.cells)
            if re.search(r"\b(first|second|third|fourth|earlier|previous|this|the last)\s+edition", c.source, re.I)]
    assert not said, f"cells {said} talk about the course's own editions"


def test_no_fixed_name_in_the_shared_temp_folder():
    """On a machine where students share /tmp (sticky), a fixed file name there belongs to the first student who
    writes it: the next student's cell fails on it, or writes through a symlink a classmate planted. A chapter or a
    student helper that writes a file for the reader makes a folder of its own instead (a chapter with
    ``course.notebook.scratch_folder``, see the next test; a helper with ``tempfile.mkdtemp``), and
    the commands the chapters teach name a folder of the reader's (``TORCH_TRACE=./trace``). The instructor's side
    (course/grading, course/serving) is left out: its sandbox mounts a private /tmp of its own."""
    code = re.compile(r"gettempdirb?\(|\btempfile\.tempdir\b|[\"'](/tmp|/var/tmp)(/|[\"'])|[\s=](/tmp|/var/tmp)/")
    prose = re.compile(r"[\s=`](/tmp|/var/tmp)/")
    found = []
    for chapter, path in SOURCES.items():
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            rule = code if cell["cell_type"] == "code" else prose
            if rule.search("".join(cell["source"])):
                found.append(f"{chapter} cell {i}")
    for module in sorted((REPO / "course").glob("*.py")):
        if code.search(module.read_text()):
            found.append(str(module.relative_to(REPO)))
    assert not found, f"a fixed name in the shared temp folder: {found}"
    assert code.search('p = Path("/tmp") / "x"') and code.search("tempfile.gettempdirb()")
    assert prose.search("run `TORCH_TRACE=/tmp/trace python train.py`") and not prose.search("`/dev/shm`")


_MKDTEMP = re.compile(r"\bmkdtemp\b")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_temporary_folder_a_chapter_makes_is_removed(chapter):
    """Each run of a chapter would otherwise leave its folders in the temporary folder (traces, a compile cache,
    saved models, a million file paths): a chapter makes them with course.notebook.scratch_folder, which removes
    them when the kernel shuts down, never with a bare ``mkdtemp`` (``tempfile.TemporaryDirectory`` removes its own
    folder too)."""
    cells = [i for i, c in enumerate(json.loads(SOURCES[chapter].read_text())["cells"])
             if c["cell_type"] == "code" and _MKDTEMP.search("".join(c["source"]))]
    assert not cells, f"{chapter}: cells {cells} make a folder with mkdtemp (use course.notebook.scratch_folder)"
    assert _MKDTEMP.search("from tempfile import mkdtemp") and _MKDTEMP.search("d = tf.mkdtemp(prefix='x')")
    assert not _MKDTEMP.search("d = scratch_folder('x-')")
