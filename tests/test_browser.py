"""The course in a real browser: headless Chromium (Debian's, through Playwright) against JupyterLab.

A student's JupyterLab is started exactly as ``make lab`` starts it
(``course.lab.command``), on a free 127.0.0.1 port with a token, in a scratch
copy of the course; an instructor's as ``make instructor`` does. The tests
then do what a new student and a new instructor do: open each chapter, Run
All, move a widget, get a wrong answer's message, press Validate, fetch and
edit and submit through the Assignments tab (and be warned when nothing was
answered), open the URL that `--no-browser` prints, and open Formgrader after ``make grade``.
Screenshots go to ``tests/screenshots/`` (git-ignored).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import CHAPTERS, REPO
from course import lab

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = REPO / "tests" / "screenshots"
pytestmark = [pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
              pytest.mark.xdist_group("browser")]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, who: str, root: Path, gradebook: str | None = None):
        self.token = os.urandom(8).hex()
        self.log = root / f"{who}-server.log"
        # A port found free may be taken (by the other test worker) before the server binds it: the server then
        # refuses to start (no silent move to another port, port_retries=0) and is started again on another port.
        for _ in range(3):
            self.port = free_port()
            cmd, env, cwd = lab.command(who, root, ["--no-browser", "--ServerApp.ip=127.0.0.1",
                                                    f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
                                                    f"--IdentityProvider.token={self.token}"], gradebook)
            self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                         start_new_session=True)
            self.base = f"http://127.0.0.1:{self.port}"
            for _ in range(240):
                try:
                    urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2)
                    return
                except OSError:
                    if self.proc.poll() is not None:
                        break
                    time.sleep(0.5)
            if self.proc.poll() is None or "already in use" not in self.log.read_text():
                break
        raise RuntimeError(f"JupyterLab did not start:\n{self.log.read_text()[-3000:]}")

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def stop(self) -> None:
        import signal
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001
            os.killpg(self.proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser") / "course"
    root.mkdir()
    for name in ("release", "source"):
        shutil.copytree(REPO / name, root / name)
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "tests").symlink_to(REPO / "tests")
    # This run's exchange, not the user's default one (~/.local/share/pytorch-internals/exchange): both labs use it.
    mp = pytest.MonkeyPatch()
    mp.setenv("COURSE_EXCHANGE", str(root / ".exchange"))
    yield root
    mp.undo()


@pytest.fixture(scope="module")
def student(course):
    lab.student(course)
    # Render every cell (no windowing), so that what the test reads is on the page.
    d = course / ".student" / "lab-settings" / "@jupyterlab" / "notebook-extension"
    d.mkdir(parents=True, exist_ok=True)
    (d / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # No autosave (JupyterLab's default saves every 120 s): the Submit-before-saving test needs an unsaved notebook
    # however slowly a busy machine gets there; every other test saves explicitly.
    d = course / ".student" / "lab-settings" / "@jupyterlab" / "docmanager-extension"
    d.mkdir(parents=True, exist_ok=True)
    (d / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    # The student's nbgrader cache (the tab's "Submitted assignments") belongs to this run, not to root's home.
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_DATA_DIR", str(course / ".jupyter-data"))
    try:
        server = Server("student", course)
    finally:
        mp.undo()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
    yield b
    b.close()
    pw.stop()


@pytest.fixture
def page(browser):
    SHOTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    p = context.new_page()
    p.console_errors = []
    p.on("console", lambda m: p.console_errors.append(m.text) if m.type == "error" else None)
    yield p
    context.close()


def open_notebook(page, server: Server, path: str) -> None:
    # ?reset: a fresh workspace, so that only this notebook is open (no tabs restored from earlier tests).
    page.goto(server.url(f"lab/tree/{path}?reset"))
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    wait_for_kernel(page, server, path)


def dismiss_kernel_dialog(page) -> None:
    """A notebook run before its kernel is ready asks which kernel to use: take the notebook's own."""
    dialog = page.locator(".jp-Dialog:has-text('Select Kernel')")
    if dialog.count():
        dialog.locator("button:has-text('Select')").first.click()


def wait_for_kernel(page, server: Server, path: str, timeout: float = 180) -> None:
    """Wait until the notebook's kernel has started, answered and is idle, as the server sees it.

    On a loaded machine the page can show an idle indicator before the kernel is connected; a Run All
    clicked then runs nothing (seen once in a three-process run: no cell ever executed)."""
    end = time.time() + timeout
    while time.time() < end:
        dismiss_kernel_dialog(page)
        try:
            with urllib.request.urlopen(server.url("api/sessions"), timeout=5) as r:
                sessions = json.loads(r.read())
        except OSError:
            sessions = []
        kernel = next((s["kernel"] for s in sessions if s.get("path", "").endswith(path) and s.get("kernel")), None)
        if kernel and kernel.get("execution_state") == "idle" and \
                page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count():
            time.sleep(1.0)
            return
        time.sleep(0.5)
    raise TimeoutError(f"the kernel of {path} did not become idle within {timeout:g} s")


def menu(page, top: str, item: str) -> None:
    page.click(f".lm-MenuBar-itemLabel:text-is('{top}')")
    page.click(f".lm-Menu-itemLabel:text-is('{item}')")


def save(page) -> None:
    page.keyboard.press("Control+s")
    page.wait_for_selector(".lm-TabBar-tab.jp-mod-current:not(.jp-mod-dirty)", timeout=30_000)


def wait_until_done(page, file: Path, timeout: float = 900) -> None:
    """Save until the notebook's last code cell has run (Run All runs cells in order) and the kernel is idle.

    If Run All never started (no cell has run after 60 s with the kernel idle: the click raced the kernel's
    start), it is clicked once more. That cannot hide a Run All that stops early: a stop leaves cells run."""
    start = time.time()
    end, again = start + timeout, False
    while time.time() < end:
        time.sleep(2.0)
        dismiss_kernel_dialog(page)
        if page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count() == 0:
            continue
        save(page)
        try:
            code = [c for c in json.loads(file.read_text())["cells"] if c["cell_type"] == "code"]
        except ValueError:  # read while the server was still writing it
            continue
        if code and code[-1].get("execution_count") is not None:
            return
        if not again and time.time() - start > 60 and all(c.get("execution_count") is None for c in code):
            print(f"[browser] {file.name}: Run All had not started after 60 s (kernel not ready): clicked again")
            page.screenshot(path=str(SHOTS / f"not-started-{file.stem}.png"))
            menu(page, "Run", "Run All Cells")
            again = True
    page.screenshot(path=str(SHOTS / f"timeout-{file.stem}.png"))
    raise TimeoutError(f"Run All did not reach the last cell of {file.name} (screenshot timeout-{file.stem}.png)")


def saved_notebook(root: Path, path: str) -> dict:
    return json.loads((root / "my_work" / path).read_text())


# One chapter in the browser (JupyterLab's Run All, the saved notebook, the progress cell): every chapter's untouched
# release also runs top to bottom through the judge's worker in tests/test_chapters.py (the `empty` submission:
# every code cell executed, errors only in cells tagged raises-exception), which costs a kernel run, not a browser.
@pytest.mark.parametrize("chapter", CHAPTERS[:1])
def test_run_all_runs_every_cell_of_the_student_notebook(page, student, course, chapter):
    path = f"{chapter}/{chapter}.ipynb"
    open_notebook(page, student, path)
    time.sleep(1.5)
    assert page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count() == 0, \
        "the notebook shows unsaved changes as soon as it opens"
    t0 = time.time()
    menu(page, "Run", "Run All Cells")
    try:
        wait_until_done(page, course / "my_work" / path)
    finally:
        page.screenshot(path=str(SHOTS / f"run-all-{chapter}.png"))
    seconds = time.time() - t0
    nb = saved_notebook(course, path)
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    not_run = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    assert not not_run, f"{len(not_run)} of {len(code)} code cells never ran (first: {not_run[:5]})"
    unexpected = []
    for c in code:
        errors = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
        if errors and "raises-exception" not in c.get("metadata", {}).get("tags", []):
            unexpected.append(f"{errors[0].get('ename')}: {errors[0].get('evalue', '')[:120]}")
        elif errors:
            tb = "\n".join(errors[0].get("traceback", []))
            assert "course/checks.py" not in tb and len(tb) < 2000, f"a failure shows helper frames:\n{tb[:500]}"
    assert not unexpected, f"errors outside the test cells: {unexpected}"
    progress = code[-1]
    text = "".join("".join(o.get("text", "")) for o in progress.get("outputs", []))
    assert "Progress in" in text, "the progress cell at the end did not report"
    print(f"[browser] {chapter}: Run All ran all {len(code)} code cells in {seconds:.1f} s")


def truncated_copy(course, chapter: str, name: str, keep_through, edit=None) -> str:
    """Write my_work/<chapter>/<name>: the student's notebook up to the first cell for which
    ``keep_through(cell)`` is true (later cells dropped, to keep the browser tests short); return its path."""
    nb = json.loads((course / "release" / chapter / f"{chapter}.ipynb").read_text())
    nb["metadata"]["language_info"] = lab.kernel_language_info()
    end = next(i for i, c in enumerate(nb["cells"]) if keep_through(c))
    nb["cells"] = nb["cells"][:end + 1]
    for c in nb["cells"]:
        if edit:
            edit(c)
    (course / "my_work" / chapter / name).write_text(json.dumps(nb))
    return f"{chapter}/{name}"


def test_a_widget_reruns_when_moved(page, student, course):
    path = truncated_copy(course, "01_dynamic_graphs", "widget.ipynb",
                          lambda c: c["cell_type"] == "code" and any(k in "".join(c["source"])
                                                                     for k in (".observe(", "live_view(")))
    open_notebook(page, student, path)
    menu(page, "Run", "Run All Cells")
    wait_until_done(page, course / "my_work" / path)
    slider = page.locator(".widget-slider, .jupyter-widgets.widget-hslider").first
    slider.scroll_into_view_if_needed()
    cell = page.locator(".jp-CodeCell", has=slider)
    before = cell.locator(".jp-Cell-outputArea").first.inner_text()
    handle = slider.locator(".noUi-handle, .ui-slider-handle, input").first
    handle.click()
    page.keyboard.press("ArrowRight")
    deadline = time.time() + 60
    after = before
    while time.time() < deadline and after == before:
        time.sleep(0.5)
        after = cell.locator(".jp-Cell-outputArea").first.inner_text()
    page.screenshot(path=str(SHOTS / "widget-moved.png"))
    assert after != before, "moving the slider did not change its output"


def test_a_wrong_answer_shows_the_short_tutor_message(page, student, course):
    """Chapter 1 with a real student mistake typed in (sgd_step that never clears .grad)."""
    from course.grading.judge import answers
    wrong = next(v for v in answers.load_variants("01_dynamic_graphs", "mutant", REPO)
                 if v.cell == "sgd_step" and "test_sgd_step_no_accumulation" in v.fails and v.klass == "graph")

    def type_in(c):
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sgd_step":
            c["source"] = wrong.source

    truncated_copy(course, "01_dynamic_graphs", "wrong.ipynb",
                   lambda c: c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_sgd_step_no_accumulation",
                   edit=type_in)
    open_notebook(page, student, "01_dynamic_graphs/wrong.ipynb")
    menu(page, "Run", "Run All Cells")
    wait_until_done(page, course / "my_work" / "01_dynamic_graphs" / "wrong.ipynb")
    saved = saved_notebook(course, "01_dynamic_graphs/wrong.ipynb")
    test = next(c for c in saved["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_sgd_step_no_accumulation")
    err = next(o for o in test["outputs"] if o.get("output_type") == "error")
    text = "\n".join(err["traceback"])
    page.locator(".jp-CodeCell", has_text="took two independent steps").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "wrong-answer-message.png"))
    assert "Check failed" in text and "of this cell" in text, text
    assert "checks.py" not in text and "Traceback" not in text and len(err["traceback"]) <= 6, text


def test_validate_is_short_and_summarised(page, student):
    open_notebook(page, student, "02_autograd/02_autograd.ipynb")
    page.locator(".jp-ToolbarButtonComponent:has-text('Validate'), button:has-text('Validate')").first.click()
    page.wait_for_selector(".jp-Dialog", timeout=600_000)
    page.wait_for_selector(".jp-Dialog :text('test cell(s) fail')", timeout=600_000)
    text = page.locator(".jp-Dialog").inner_text()
    page.screenshot(path=str(SHOTS / "validate.png"))
    assert "test cell(s) fail" in text and len(text) < 4000, f"{len(text)} characters:\n{text[:600]}"
    assert text.count("The following cell failed") <= 4


def open_assignment_list(page, server: Server) -> None:
    page.goto(server.url("lab?reset"))
    page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Nbgrader')", timeout=90_000)
    menu(page, "Nbgrader", "Assignment List")
    page.wait_for_selector("text=Released assignments", timeout=60_000)
    page.wait_for_selector("#fetched_assignments_list .list_item, #released_assignments_list .list_item", timeout=60_000)
    assert page.locator("text=Error fetching courses").count() == 0


def fresh_copy(course, chapter: str) -> Path:
    """The chapter's working copy as the student got it (the release), whatever earlier tests did to it."""
    nb = json.loads((course / "release" / chapter / f"{chapter}.ipynb").read_text())
    nb["metadata"]["language_info"] = lab.kernel_language_info()
    path = course / "my_work" / chapter / f"{chapter}.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    return path


def inbound(course, chapter: str) -> list[Path]:
    """The exchange's complete submissions of ``chapter``: nbgrader makes the folder, copies the files into it
    and writes ``submission_secret.txt`` last, so a folder without it is still being copied."""
    folders = (course / ".exchange" / "pytorch-internals" / "inbound").glob(f"*+{chapter}+*")
    return sorted(f for f in folders if (f / "submission_secret.txt").exists())


def wait_for_inbound(course, chapter: str, count: int, timeout: float = 90) -> list[Path]:
    """The exchange's submissions of ``chapter`` once there are ``count`` (the tab's list of submitted
    assignments is no sign: it shows the student's nbgrader cache, which can hold earlier runs' entries)."""
    end = time.time() + timeout
    while time.time() < end:
        found = inbound(course, chapter)
        if len(found) >= count:
            return found
        time.sleep(0.5)
    return inbound(course, chapter)


def click_submit(page, chapter: str) -> None:
    page.locator(f"#fetched_assignments_list > .list_item:has-text('{chapter}') button:has-text('Submit')").click()


def test_assignments_tab_fetches_into_the_working_copy(page, student, course):
    """A chapter folder the student deleted (to start afresh) is offered for Fetch, which recreates it in place."""
    shutil.rmtree(course / "my_work" / "03_torchscript")
    open_assignment_list(page, student)
    for ch in CHAPTERS:
        where = "released" if ch == "03_torchscript" else "fetched"
        assert page.locator(f"#{where}_assignments_list > .list_item:has-text('{ch}')").count() == 1, (ch, where)
    page.locator("#released_assignments_list .list_item:has-text('03_torchscript') button:has-text('Fetch')").click()
    page.wait_for_selector("#fetched_assignments_list .list_item:has-text('03_torchscript')", timeout=60_000)
    page.screenshot(path=str(SHOTS / "assignments-tab.png"))
    assert (course / "my_work" / "03_torchscript" / "03_torchscript.ipynb").is_file()
    assert not (course / "my_work" / "pytorch-internals").exists(), "Fetch made a second copy"


def test_submit_hands_in_the_notebook_the_student_edited(page, student, course):
    """Edit an exercise in the landing page's copy, save, Submit in the tab: the exchange holds the edit."""
    chapter = "01_dynamic_graphs"
    path = fresh_copy(course, chapter)
    answer = ("def sgd_step(params, loss_fn, lr, weight_decay=0.0):\n"
              "    return 0.0  # typed in the browser by test_submit_hands_in_the_notebook_the_student_edited")
    open_notebook(page, student, f"{chapter}/{chapter}.ipynb")
    cell = page.locator(".jp-CodeCell", has_text="def sgd_step(").filter(has_text="YOUR CODE HERE").first
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(answer)
    save(page)
    saved = json.loads(path.read_text())
    sol = next(c for c in saved["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sgd_step")
    assert "".join(sol["source"]).strip() == answer, "".join(sol["source"])
    before = set(inbound(course, chapter))
    open_assignment_list(page, student)
    click_submit(page, chapter)
    after = wait_for_inbound(course, chapter, len(before) + 1)
    page.wait_for_selector(f"#submitted_assignments_list .list_item:has-text('{chapter}')", timeout=60_000)
    page.screenshot(path=str(SHOTS / "submitted-edit.png"))
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").inner_text()
    (new,) = set(after) - before
    handed_in = json.loads((new / f"{chapter}.ipynb").read_text())
    sub = next(c for c in handed_in["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sgd_step")
    assert "".join(sub["source"]).strip() == answer, "the exchange did not receive the edited notebook"


def test_submitting_an_unanswered_notebook_warns_first(page, student, course):
    """Submit of a notebook with no answer changed: the tab says so and hands in nothing; Submit again hands it in."""
    chapter = "06_torch_compile"
    fresh_copy(course, chapter)
    assert not inbound(course, chapter)
    open_assignment_list(page, student)
    click_submit(page, chapter)
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=60_000)
    text = dialog.inner_text()
    page.screenshot(path=str(SHOTS / "submit-unanswered-warning.png"))
    assert "Invalid Submission" in text and "none of your answers" in text, text
    assert f"{chapter}/{chapter}.ipynb" in text and "Traceback" not in text, text
    assert not wait_for_inbound(course, chapter, 1, timeout=3), "the unanswered notebook was handed in"
    dialog.locator("button:has-text('Ok'), button:has-text('OK')").first.click()
    dialog.wait_for(state="detached", timeout=30_000)
    click_submit(page, chapter)
    assert len(wait_for_inbound(course, chapter, 1)) == 1, "a second Submit should hand in the unchanged notebook"
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").inner_text()


def test_submit_with_unsaved_changes_asks_to_save_first(page, student, course):
    """Type an answer, run it, and press Submit before any save: the tab asks to save first and hands in nothing
    (nbgrader hands in the file on disk); once saved, Submit hands the answer in."""
    chapter = "02_autograd"
    path, answer = fresh_copy(course, chapter), "answer = 2  # run, then submitted before saving"
    open_notebook(page, student, f"{chapter}/{chapter}.ipynb")
    cell = page.locator(".jp-CodeCell").filter(has_text="YOUR CODE HERE").first
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(answer)
    page.keyboard.press("Control+Enter")
    runs, end = course / ".student" / "runs", time.time() + 60
    while (lab.last_run(runs, path) or 0) <= path.stat().st_mtime and time.time() < end:
        time.sleep(0.5)
    assert (lab.last_run(runs, path) or 0) > path.stat().st_mtime, "the kernel recorded no run of the cell"
    menu(page, "Nbgrader", "Assignment List")
    page.wait_for_selector(f"#fetched_assignments_list .list_item:has-text('{chapter}')", timeout=60_000)
    click_submit(page, chapter)
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=60_000)
    text = dialog.inner_text()
    page.screenshot(path=str(SHOTS / "submit-unsaved-refused.png"))
    assert "not saved" in text and f"{chapter}/{chapter}.ipynb" in text and "Traceback" not in text, text
    assert not wait_for_inbound(course, chapter, 1, timeout=3), "the old file was handed in"
    dialog.locator("button:has-text('Ok'), button:has-text('OK')").first.click()
    dialog.wait_for(state="detached", timeout=30_000)
    page.locator(f".lm-TabBar-tab:has-text('{chapter}.ipynb')").first.click()
    save(page)
    assert answer in path.read_text()
    menu(page, "Nbgrader", "Assignment List")
    click_submit(page, chapter)
    (sub,) = wait_for_inbound(course, chapter, 1)
    assert answer in (sub / f"{chapter}.ipynb").read_text(), "the saved answer was not handed in"


def test_no_browser_url_opens_the_landing_page(browser, student, course):
    """`make lab LAB_ARGS=--no-browser` prints a URL; opened, it shows index.ipynb, not the Launcher."""
    import re
    import signal
    port, log = free_port(), course / "no-browser.log"
    proc = subprocess.Popen([sys.executable, "-m", "course.lab", "serve", "student", str(course), "--no-browser",
                             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}"],
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = None
        for _ in range(240):
            m = re.search(rf"http://127\.0\.0\.1:{port}/\S*\?token=\w+", log.read_text())
            if m:
                url = m.group(0)
                break
            time.sleep(0.5)
        assert url, log.read_text()[-2000:]
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        p = context.new_page()
        p.goto(url)
        p.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=120_000)
        p.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown h1:has-text('PyTorch Internals')",
                            timeout=60_000)
        p.screenshot(path=str(SHOTS / "no-browser-url.png"))
        current = p.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current, .lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
        assert "index.ipynb" in current.first.inner_text()
        assert p.locator(".jp-Launcher:visible").count() == 0, "the Launcher opened instead of the landing page"
        context.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_student_lab_hides_the_instructors_files_and_tools(page, student):
    page.goto(student.url("lab?reset"))
    page.wait_for_selector(".jp-DirListing-content", timeout=90_000)
    page.locator(".jp-BreadCrumbs-home").first.click()  # the root of the student's server
    page.wait_for_selector(".jp-DirListing-item:has-text('index.ipynb')", timeout=30_000)
    names = page.locator(".jp-DirListing-item .jp-DirListing-itemText").all_inner_texts()
    assert "01_dynamic_graphs" in names and "index.ipynb" in names
    for secret in ("source", "tests", "autograded", "release", "gradebook.db"):
        assert secret not in names, f"the student's file browser shows {secret}"
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    assert "Assignment List" in items and not any("Formgrader" in i or "Create" in i for i in items), items
    page.screenshot(path=str(SHOTS / "student-lab.png"))


def test_the_landing_page_lists_the_chapters_and_progress(page, student, course):
    open_notebook(page, student, "index.ipynb")
    menu(page, "Run", "Run All Cells")
    wait_until_done(page, course / "my_work" / "index.ipynb")
    page.screenshot(path=str(SHOTS / "landing-page.png"))
    # The saved notebook, not the page's text: JupyterLab renders only the cells in view.
    saved = saved_notebook(course, "index.ipynb")
    text = "\n".join(["".join(c["source"]) for c in saved["cells"]] + [
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) +
        "".join(o.get("data", {}).get("text/markdown", "")) + "".join(o.get("data", {}).get("text/html", ""))
        for c in saved["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])])
    for ch in CHAPTERS:
        assert ch in text, ch
    assert "? min" not in text, "a chapter's time estimate was not read"
    assert "visible tests passing" in text, "the progress of the chapters run above should show"


def test_instructor_formgrader_lists_chapters_and_the_demo_class(browser, course):
    from course.grading.authoring import demo
    from concurrent.futures import ThreadPoolExecutor

    # in a thread of its own: Playwright's event loop runs in this one, and the grader starts its own (asyncio.run)
    with ThreadPoolExecutor(1) as pool:
        status = pool.submit(demo.demo, course, only=["01_dynamic_graphs"], wrong=1).result()
    assert status == 0, "the demo class did not grade as expected"
    server = Server("instructor", course, gradebook=".demo/gradebook.db")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.goto(server.url("formgrader"))
        page.wait_for_selector("text=06_torch_compile", timeout=90_000)
        text = page.locator("body").inner_text()
        for ch in CHAPTERS:
            assert ch in text
        assert "does not exist and could not be created" not in text
        page.screenshot(path=str(SHOTS / "formgrader-assignments.png"))
        page.goto(server.url("formgrader/manage_submissions/01_dynamic_graphs"))
        page.wait_for_selector("text=demo-full-marks", timeout=90_000)
        text = page.locator("body").inner_text()
        page.screenshot(path=str(SHOTS / "formgrader-submissions.png"))
        assert "demo-full-marks" in text and "demo-empty" in text
        assert "None, None" not in text, "Formgrader shows students without a name as 'None, None'"
        context.close()
    finally:
        server.stop()
    # The README's feedback step, as written, after `make grade` (`make feedback GRADEBOOK=.demo/gradebook.db`).
    from course.grading.nbgrader import wrapper as nbgrader_io
    fb = nbgrader_io.run(["generate_feedback", "01_dynamic_graphs", "--force"], course,
                         extra_env={"COURSE_GRADEBOOK_URL": nbgrader_io.sqlite(course / ".demo" / "gradebook.db")},
                         check=False)
    assert fb.returncode == 0, fb.stdout[-2000:] + fb.stderr[-3000:]
    assert (course / "feedback" / "demo-full-marks" / "01_dynamic_graphs" / "01_dynamic_graphs.html").is_file()
    log = server.log.read_text()
    assert "not serializable" not in log and "not absolute" not in log


def test_server_logs_are_quiet(student):
    log = student.log.read_text()
    assert "not absolute" not in log, "CourseDirectory.root warnings"
    assert "Unwritable directory" not in log and "ExchangeError" not in log
    assert "not serializable" not in log
