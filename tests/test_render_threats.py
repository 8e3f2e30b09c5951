"""Nothing a student sends runs script in the instructor's or the student's browser (issue 26, item 5, rendering).

One class of the toy chapter (``tests/toycourse.py``, its statements given a signature with ``->`` and two
``<details>`` hints, as the real chapters write them) is submitted through the exchange, collected with
``nbgrader collect`` (the intake), graded with ``python -m course.grading grade-class --feedback``, and its
feedback made with ``nbgrader generate_feedback``. Then the course's own Formgrader serves each graded
notebook. The class holds an honest student, who keeps full marks, and one student per attack:

* ``image-metadata``: PNG outputs whose metadata puts ``onerror=...`` into the unquoted ``width`` and
  ``height`` of nbconvert's classic template, ``filenames`` pointing the ``<img>`` at a beacon or at
  ``javascript:``, and an ``isolated`` HTML output (a ``data:`` iframe);
* ``markdown-links``: ``javascript:``, ``data:`` and ``vbscript:`` links in a markdown cell and in markdown
  and HTML outputs: inline, reference-style, autolinks, raw ``<a>``, with entity, whitespace and case tricks,
  and the ``files/`` prefix that Formgrader's template strips;
* ``appendix``: an ``appendix.html`` (and SVG, XML, JavaScript) beside the notebook, linked from it;
* ``edits-statement``: the release's statement cell, same id, with an event handler and a link added.

What is checked is the HTML a browser gets: Formgrader's page for each submission and the feedback page.
No event-handler attribute beyond the page's own, no ``javascript:``/``vbscript:``/``data:`` address (but the
PNG data nbconvert embeds), no unquoted attribute but a number, no student file served; and the course's own
signature and hints render as written (``->`` in the code, ``<details>`` as an element). The same page check
runs on the real Chapter 2 release rendered as Formgrader and the feedback would render it.
"""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

import toycourse
from course.grading.authoring import trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.run.sandbox import detect
from test_threats import HONEST_COUNT, HONEST_SCALE, KEY, PAYLOAD, notebook

CH = toycourse.CHAPTER
REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.xdist_group("threats")]
needs_sandbox = pytest.mark.skipif(detect().degraded, reason="no sandbox here")

# The course's own text, as a chapter writes an exercise: the exact signature and staged hints.
STATEMENT = ("## Exercise 1: scale a tensor (2 points)\n\n```python\ndef scale(x: torch.Tensor, k: float) -> torch.Tensor:\n"
             "```\n\nReturn a tensor of the same shape (`scale(x, k) -> Tensor`).\n\n"
             "<details><summary>Hint 1</summary>\n\nWhat happens to each element?\n\n</details>\n"
             "<details><summary>Hint 2</summary>\n\nLook up broadcasting with a Python number.\n\n</details>")
# A 1x1 PNG.
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cfc0f01f0005"
    "0001ff5a6bd2a00000000049454e44ae426082")).decode()
SHORT = "document.title='pwned'"

IMAGE_METADATA = '''
from IPython.display import display
P = {payload!r}
PNG = {png!r}
display({{"image/png": PNG, "text/plain": "a picture"}}, raw=True,
        metadata={{"image/png": {{"width": "1 onerror=" + P, "height": "1 onload=" + P, "alt": '" onerror="' + P}},
                  "filenames": {{"image/png": "https://beacon.invalid/seen.png"}}}})
display({{"image/png": PNG}}, raw=True, metadata={{"width": "1 onerror=" + P, "filenames": {{"image/png": "javascript:" + P}}}})
display({{"text/html": "<b>isolated</b>"}}, raw=True, metadata={{"text/html": {{"isolated": True}}}})
display({{"image/png": PNG}}, raw=True, metadata={{"image/png": {{"width": 40, "height": "30"}}}})
'''

LINKS = (f"[inline](javascript:{SHORT}) [entity](jav&#x61;script:{SHORT}) [spaced]( JavaScript:{SHORT}) "
         f"[tab](<java\tscript:{SHORT}>) [numeric](&#106;avascript:{SHORT}) [colon](javascript&colon;{SHORT}) "
         f"[ref][r] <javascript:{SHORT}> [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) "
         f"[vb](vbscript:msgbox) [files](files/javascript:{SHORT}) ![pic](javascript:{SHORT}) "
         f"![beacon](https://beacon.invalid/md.png) [appendix](appendix.html) [up](../../../submitted/)\n\n"
         f"[r]: javascript:{SHORT}\n\n"
         f"<a href=\" jav&#x61;script:{SHORT}\">raw</a> <a href='JaVaScRiPt&colon;{SHORT}'>case</a> "
         f"<a href=\"java&#9;script:{SHORT}\">tab</a> <a href=\"data:text/html,&lt;script&gt;{SHORT}&lt;/script&gt;\">d</a> "
         f"<a href=\"vbscript:msgbox\">vb</a> <img src=x onerror=\"{SHORT}\"> <details ontoggle=\"{SHORT}\" open>x</details>\n\n"
         f"<script>\n[hidden](javascript:{SHORT})\n</script>\n\n"
         "A fair link: [the docs](https://pytorch.org/docs/stable/autograd.html).")

MARKDOWN_OUTPUTS = '''
from IPython.display import display, HTML, Markdown
display(Markdown({links!r}))
display(HTML({html!r}))
'''
HTML_OUTPUT = (f'<a href=" jav&#x61;script:{SHORT}">h</a><img src=x onerror="{SHORT}"><iframe src="javascript:{SHORT}">'
               f'</iframe><a href="data:text/html;base64,PHNjcmlwdD4=">d</a><form action="javascript:{SHORT}"><button>b'
               f'</button></form><svg><a xlink:href="javascript:{SHORT}"><text>s</text></a></svg>')

APPENDIX_FILES = {
    "appendix.html": f"<script>{PAYLOAD}</script>",
    "APPENDIX2.HTM": f"<script>{PAYLOAD}</script>",
    "figure.svg": f'<svg xmlns="http://www.w3.org/2000/svg" onload="{SHORT}"/>',
    "data.xml": f'<html xmlns="http://www.w3.org/1999/xhtml"><script>{SHORT}</script></html>',
    "helper.js": SHORT,
    "sub/page.xhtml": "<p/>",
    "notes.txt": "my notes",
    "numbers.csv": "1,2,3\n",
}


# --- what a browser gets ------------------------------------------------------------------------------

class _Tags(HTMLParser):
    """Every start tag of a page with its attributes (values entity-decoded, as a browser reads them)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag


def tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    p = _Tags()
    p.feed(page)
    return p.tags


def scheme(value: str) -> str:
    """The scheme a browser sees: C0 controls, spaces, tabs and newlines removed, lower case ("" if none)."""
    s = re.sub(r"[\x00-\x20\x7f-\xa0]", "", value).lower()
    s = re.sub(r"^(/?files/)+", "", s)  # the formgrade template strips this prefix after rendering
    m = re.match(r"([a-z][a-z0-9+.\-]*):", s)
    return m.group(1) if m else ""


URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "data", "srcdoc", "cite"}
EMBEDDED_IMAGE = re.compile(r"data:image/(png|jpeg);base64,[A-Za-z0-9+/=\s]*\Z")


def unquoted(page: str) -> set[tuple[str, str]]:
    """(attribute, value) pairs written without quotes in the page's tags."""
    out = set()
    for tag in re.findall(r"<[a-zA-Z][^<>]*>", page):
        inner = re.sub(r"=\s*\"[^\"]*\"|=\s*'[^']*'", "=Q ", tag)  # drop quoted values first
        for name, value in re.findall(r"\s([^\s=/<>\"']+)=([^\s\"'>=][^\s>]*)", inner):
            if value != "Q":
                out.add((name.lower(), value))
    return out


def check_page(page: str, honest: str, where: str, tag: str) -> None:
    """No student script can run from ``page``; ``honest`` (the honest student's same page) sets what the page may hold."""
    handlers_honest = {(t, n, v) for t, attrs in tags(honest) for n, v in attrs if n.lower().startswith("on")}
    for t, attrs in tags(page):
        for name, value in attrs:
            name, value = name.lower(), value or ""
            if name.startswith("on"):
                assert (t, name, value) in handlers_honest, f"{where}: an event handler <{t} {name}={value[:80]!r}>"
            if name in URL_ATTRS or name == "srcset":
                s = scheme(value)
                if t == "img" and name == "src" and s == "data":
                    assert EMBEDDED_IMAGE.match(value), f"{where}: <img src={value[:80]!r}>"
                else:
                    assert s not in ("javascript", "vbscript", "data", "file"), f"{where}: <{t} {name}={value[:80]!r}>"
            if t == "img" and name == "src" and scheme(value) in ("http", "https", ""):
                assert "beacon.invalid" not in value, f"{where}: a beacon <img src={value!r}>"
            assert not (t == "meta" and name == "http-equiv" and value.lower() == "refresh"), f"{where}: a redirect"
        assert t not in ("iframe", "object", "embed", "frame", "base") or t in {x for x, _ in tags(honest)}, \
            f"{where}: <{t}> from the student"
    extra = unquoted(page) - unquoted(honest)
    bad = {(n, v) for n, v in extra if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", v)}
    assert not bad, f"{where}: unquoted attributes {sorted(bad)[:5]}"
    body = page.split("<body", 1)[-1]
    assert body.count("<script") == honest.split("<body", 1)[-1].count("<script"), f"{where}: a <script> in the body"
    for t, attrs in tags(page):
        for name, value in attrs:
            assert tag not in (value or "") or name in ("alt", "title"), f"{where}: the payload in <{t} {name}>"


def check_course_text(page: str, where: str, signatures: int = 1, hints: int = 2) -> None:
    """The course's statement and hints as written: ``->`` (not ``-&gt;`` shown as text), ``<details>`` elements."""
    assert "-&amp;gt;" not in page, f"{where}: a signature shows -&gt;"
    assert "&lt;details&gt;" not in page and "&lt;summary&gt;" not in page, f"{where}: a hint shows as raw text"
    arrows = page.count('<span class="o">-&gt;</span>') + len(re.findall(r"<code>[^<]*-&gt;[^<]*</code>", page))
    assert arrows >= signatures, f"{where}: {arrows} signatures with -> rendered, expected {signatures}"
    assert page.count("<details>") >= hints and page.count("<summary>") >= hints, f"{where}: hints not rendered"


# --- the class ----------------------------------------------------------------------------------------

def _course(work: Path) -> tuple[Path, dict]:
    course = toycourse.make(work / "course")
    src = course / "source" / CH / f"{CH}.ipynb"
    nb = nbformat.read(str(src), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## Exercise 1"):
            cell.source = STATEMENT
    nbformat.write(nb, str(src))
    exchange = work / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o1777)
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    db_url = nbgrader_io.sqlite(course / "gradebook.db")
    rel = nbgrader_io.generate(course, CH, db_url)
    nbgrader_io.run(["release_assignment", CH], course, db_url)
    return course, json.loads((rel / f"{CH}.ipynb").read_text())


def _edited_statement(release: dict) -> dict:
    nb = notebook(release, HONEST_SCALE)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and "".join(cell["source"]).startswith("## Exercise 1"):
            cell["source"] = "".join(cell["source"]) + f'\n\n<img src=x onerror="{SHORT}"> [go](javascript:{SHORT})'
    return nb


@pytest.fixture(scope="module")
def render_class(tmp_path_factory):
    work = tmp_path_factory.mktemp("render")
    course, release = _course(work)
    tag = os.urandom(4).hex()
    payload = PAYLOAD.format(tag=tag)
    subs = {
        "honest": notebook(release, HONEST_SCALE),
        "image-metadata": notebook(release, IMAGE_METADATA.format(payload=payload, png=PNG) + HONEST_SCALE),
        "markdown-links": notebook(release, HONEST_SCALE, MARKDOWN_OUTPUTS.format(links=LINKS, html=HTML_OUTPUT)
                                   + HONEST_COUNT, extra_md=LINKS),
        "appendix": notebook(release, HONEST_SCALE, extra_md="See [my appendix](appendix.html) and "
                                                            "<a href=\"appendix.html\">again</a>."),
        "edits-statement": _edited_statement(release),
    }
    db_url = nbgrader_io.sqlite(course / "gradebook.db")
    from nbgrader.api import Gradebook
    with Gradebook(db_url) as gb:  # the class list: collect takes only students the gradebook knows
        for student in subs:
            gb.update_or_create_student(student, last_name=student, first_name="")
    inbound = work / "exchange" / "pytorch-internals" / "inbound"
    for student, nb in subs.items():
        d = inbound / f"{student}+{CH}+2026-12-01 10:00:00.000000 UTC"
        d.mkdir(parents=True)
        (d / f"{CH}.ipynb").write_text(json.dumps(nb))
        (d / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    for name, text in APPENDIX_FILES.items():
        p = inbound / f"appendix+{CH}+2026-12-01 10:00:00.000000 UTC" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    t0 = time.perf_counter()
    collect = nbgrader_io.run(["collect", CH, "--update"], course, db_url, check=False)
    proc = subprocess.run([sys.executable, "-m", "course.grading", "grade-class", CH, "--seed", str(KEY), "--jobs", "2",
                           "--feedback", "--no-progress"], cwd=course, env=nbgrader_io.env(), capture_output=True,
                          text=True, timeout=1200)
    feedback = nbgrader_io.run(["generate_feedback", CH, "--force"], course, db_url, check=False)
    seconds = time.perf_counter() - t0
    print(proc.stdout[-4000:], proc.stderr[-2000:], f"\n[render] collected, graded and fed back {len(subs)} in {seconds:.1f} s")
    return {"course": course, "release": release, "subs": subs, "tag": tag, "payload": payload, "proc": proc,
            "collect": collect, "feedback": feedback, "scores": trial.read_scores(course / "gradebook.db", CH, CH)}


@pytest.fixture(scope="module")
def pages(render_class):
    """{student: {"formgrader": html, "feedback": html}}, and what Formgrader answers for a student's own files."""
    from test_browser import Server

    c = render_class
    course = c["course"]
    out: dict = {}
    server = Server("instructor", course, "gradebook.db")
    try:
        from nbgrader.api import Gradebook
        with Gradebook(nbgrader_io.sqlite(course / "gradebook.db")) as gb:
            ids = {s: gb.find_submission_notebook(CH, CH, s).id for s in c["subs"]}

        def get(path: str) -> tuple[int, str]:
            try:
                with urllib.request.urlopen(server.url(path), timeout=120) as r:
                    return r.status, r.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as err:
                return err.code, ""
        for student, sid in ids.items():
            status, html = get(f"formgrader/submissions/{sid}/")
            assert status == 200, f"Formgrader did not show {student}'s submission ({status})"
            out[student] = {"formgrader": html, "feedback": (course / "feedback" / student / CH / f"{CH}.html").read_text()}
        sid = ids["appendix"]
        out["served"] = {name: get(path)[0] for name, path in {
            "formgrader appendix.html": f"formgrader/submissions/{sid}/appendix.html",
            "formgrader figure.svg": f"formgrader/submissions/{sid}/figure.svg",
            "files autograded": f"files/autograded/appendix/{CH}/appendix.html",
            "files submitted": f"files/submitted/appendix/{CH}/appendix.html",
            "files feedback": f"files/feedback/appendix/{CH}/appendix.html",
            "formgrader notes.txt": f"formgrader/submissions/{sid}/notes.txt",
        }.items()}
    finally:
        server.stop()
    return out


@needs_sandbox
def test_the_honest_student_and_every_attacker_keep_full_marks(render_class):
    c = render_class
    assert c["proc"].returncode == 0, c["proc"].stdout[-3000:] + c["proc"].stderr[-3000:]
    assert c["feedback"].returncode == 0, c["feedback"].stdout[-2000:] + c["feedback"].stderr[-3000:]
    assert set(c["scores"]) == set(c["subs"]), sorted(c["scores"])
    for student, cells in c["scores"].items():
        assert all(s == m for s, m in cells.values()), f"{student}: {cells}"  # rendering attacks cost nothing, gain nothing


@needs_sandbox
@pytest.mark.parametrize("student", ["image-metadata", "markdown-links", "appendix", "edits-statement"])
@pytest.mark.parametrize("view", ["formgrader", "feedback"])
def test_no_student_script_in_formgrader_or_the_feedback(render_class, pages, student, view):
    check_page(pages[student][view], pages["honest"][view], f"{view} {student}", render_class["tag"])


@needs_sandbox
@pytest.mark.parametrize("student", ["honest", "image-metadata", "markdown-links", "appendix", "edits-statement"])
@pytest.mark.parametrize("view", ["formgrader", "feedback"])
def test_the_course_text_renders_as_written(pages, student, view):
    page = pages[student][view]
    check_course_text(page, f"{view} {student}")
    if student in ("honest", "edits-statement"):
        # every markdown cell is the release's, put back and rendered by nbconvert as written (none was cleaned)
        assert 'class="student-text"' not in page and "[go]" not in page and "onerror" not in page.split("<body")[1]


@needs_sandbox
def test_the_attacks_were_really_made(render_class, pages):
    """Each attack reached the page as data (so the checks above looked at it), and the honest parts still show."""
    graded = json.loads((render_class["course"] / "autograded" / "image-metadata" / CH / f"{CH}.ipynb").read_text())
    images = [o for cell in graded["cells"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 3, "the student's images are kept"
    metas = [o.get("metadata", {}) for cell in graded["cells"] for o in cell.get("outputs", [])]
    assert {"image/png": {"width": 40, "height": 30}} in metas  # a plain size is kept, as a number
    for m in metas:
        assert "filenames" not in m and "isolated" not in json.dumps(m), m
        for level in (m, m.get("image/png", {})):
            assert all(isinstance(level.get(k, 0), (int, float)) for k in ("width", "height")), m
    fg = pages["image-metadata"]["formgrader"]
    assert any(t == "img" and ("width", "40") in a and ("height", "30") in a for t, a in tags(fg))
    links = pages["markdown-links"]["formgrader"]
    assert "[hidden](javascript:" in links  # the escaped <script> block shows as text, its link never parsed
    assert '<a href="https://pytorch.org/docs/stable/autograd.html">the docs</a>' in links  # fair links still work
    assert links.count(">inline</a>") == 2 and ">raw</a>" in links  # the links are there, as plain text
    edited, honest = pages["edits-statement"]["formgrader"], pages["honest"]["formgrader"]
    assert edited.count("onerror") == honest.count("onerror") and "[go]" not in edited  # the statement is the release's


@needs_sandbox
def test_a_students_active_files_are_never_served(render_class, pages):
    c = render_class
    course = c["course"]
    active = {"appendix.html", "APPENDIX2.HTM", "figure.svg", "data.xml", "helper.js", "page.xhtml"}
    for place in ("submitted", "autograded", "feedback", ".judge/staged"):
        found = {p.name for p in (course / place).rglob("*") if p.is_file()} if (course / place).exists() else set()
        assert not found & active, f"{place} holds {sorted(found & active)}"
    assert (course / "submitted" / "appendix" / CH / "notes.txt").is_file()  # inert files still come through
    log = json.loads((course / ".judge" / "intake" / CH / "appendix.json").read_text())
    assert sum("browser would run" in d for d in log["dropped"]) == 6, log["dropped"]
    table = next(line for line in c["proc"].stdout.splitlines() if line.startswith("appendix "))
    served = pages["served"]
    assert served["formgrader notes.txt"] == 200, served  # the handler works; what it serves is inert
    assert all(code == 404 for name, code in served.items() if name != "formgrader notes.txt"), served
    assert "active files dropped" in table, table


# --- the real Chapter 2, as Formgrader and the feedback render it --------------------------------------

@pytest.mark.parametrize("template", ["formgrade", "feedback"])
def test_chapter_2_statements_and_hints_render_as_written(template, tmp_path):
    """The measured rewrite (6 of 7 signatures as -&gt;, 18 hints as raw text) does not happen on the real chapter."""
    from nbconvert import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    chapter = "02_autograd"
    release = REPO / "release" / chapter / f"{chapter}.ipynb"
    nb = json.loads(release.read_text())
    sigs = sum("->" in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown" and "def " in "".join(c["source"]))
    hints = sum("".join(c["source"]).count("<details>") for c in nb["cells"] if c["cell_type"] == "markdown")
    assert sigs >= 6 and hints >= 18, (sigs, hints)
    cfg = Config()
    cfg.HTMLExporter.preprocessors = ["course.grading.nbgrader.render.SafeNotebook"]
    cfg.HTMLExporter.template_name = template
    cfg.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    # as nbgrader's GenerateFeedback sets it (the feedback page inlines bootstrap's CSS)
    cfg.HTMLExporter.extra_template_paths = [str(Path(handlers.__file__).parent / "static" / "node_modules" / "bootstrap"
                                                 / "dist" / "css")]
    cfg.CourseDirectory.root = str(REPO)
    # the student's graded notebook, as it sits in autograded/ (a copy of the release, answered or not)
    graded = tmp_path / "autograded" / "someone" / chapter / f"{chapter}.ipynb"
    graded.parent.mkdir(parents=True)
    for cell in nb["cells"]:  # what nbgrader's GetGrades adds before the feedback template reads it
        if "nbgrader" in cell.get("metadata", {}):
            cell["metadata"]["nbgrader"].update(score=0, comment="")
    graded.write_text(json.dumps(nb))
    resources = {"assignment_id": chapter, "notebook_id": chapter, "index": 0, "total": 1, "base_url": "",
                 "nbgrader": {"notebook": chapter, "assignment": chapter, "score": 0, "max_score": 1,
                              "late_penalty": 0}}
    html, _ = HTMLExporter(config=cfg).from_filename(str(graded), resources=resources)
    check_course_text(html, f"{template} {chapter}", signatures=sigs, hints=hints)
