"""A whole term of a class through JupyterHub, in headless Chromium, with real local Unix users.

``python -m course.serving.hub`` (what ``make hub`` runs) starts JupyterHub (PAM log-in) behind
configurable-http-proxy on 127.0.0.1 for an instructor and two students, created for this test with random
passwords and removed after it (also on failure), with nbgrader's exchange in a shared folder. Then:

1. the instructor logs in, opens Formgrader in its own tab, and generates and releases Chapter 1 with the
   chapter's Generate and Release buttons;
2. each student logs in, fetches the chapter in the Assignments tab, types an answer to Exercise 1.2
   (``sgd_step``) into the notebook (one a correct answer, the other one that ignores ``weight_decay``),
   saves and submits;
3. the instructor collects (``nbgrader collect``, as the instructor's Unix user, so the course's intake applies);
4. ``python -m course.grading grade-class 01_dynamic_graphs`` grades through the judge;
5. the instructor releases the feedback (``nbgrader generate_feedback`` + ``release_feedback``);
6. each student fetches their own feedback in the Assignments tab and reads their own score, cannot open the
   other student's server or files through the hub (403), and, as their Unix user, cannot list the exchange's
   inbound or feedback folders nor read the other's home.

The scores are checked in the gradebook and in the feedback: the correct answer gets all of Exercise 1.2's
points, the wrong one loses exactly the weight-decay test's point, every unanswered exercise scores 0.
Each step's time is printed (``-rP``).
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHAPTER = "01_dynamic_graphs"
EXERCISE = "sgd_step"
SHOTS = REPO / "tests" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]


def _missing() -> str | None:
    """Why the term cannot run here (None when it can)."""
    if os.geteuid() != 0:
        return "the hub test creates Unix users and runs JupyterHub as root"
    if not Path(CHROMIUM).exists():
        return "Debian's chromium is not installed"
    if not shutil.which("useradd") or not shutil.which("userdel") or not shutil.which("chpasswd"):
        return "useradd/userdel/chpasswd are missing"
    try:
        import jupyterhub  # noqa: F401
        import pamela  # noqa: F401
    except ImportError as err:
        return f"JupyterHub is not installed ({err}): pip install the test extras"
    proxy = Path(sys.prefix) / "bin" / "configurable-http-proxy"
    if not proxy.exists() and not shutil.which("configurable-http-proxy"):
        return "configurable-http-proxy is not installed (make hub-system)"
    return None


pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Unix users, file owners)"),
              pytest.mark.xdist_group("hub")]
needs_hub = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def answers() -> tuple[dict, dict]:
    """A correct answer to the exercise (one of its alternatives) and a wrong one (the mutant that fails the
    fewest of its tests), from the exercise's ``alternatives/`` and ``mutants/``."""
    from course.grading.judge.answers import load_variants

    def load(kind):  # a mutant may be written as CHANGES to the reference: load_variants gives its whole source
        return [{"CELL": v.cell, "FAILS": list(v.fails), "SOURCE": v.source} for v in load_variants(CHAPTER, kind, REPO)]
    correct = next(a for a in load("alternative") if a.get("CELL") == EXERCISE)
    wrong = min((m for m in load("mutant") if m.get("CELL") == EXERCISE and m.get("FAILS")),
                key=lambda m: (len(m["FAILS"]), m["SOURCE"]))
    return correct, wrong


def grade_cells(nb_path: Path) -> dict[str, float]:
    nb = json.loads(Path(nb_path).read_text())
    return {c["metadata"]["nbgrader"]["grade_id"]: float(c["metadata"]["nbgrader"]["points"]) for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("grade")}


def processes_of(uids: set[int]) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if d.stat().st_uid in uids:
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def cmdline_of(pid: int) -> bytes:
    """A process's command line, or b"" if it ended since it was listed."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class Hub:
    """The class: users, folders, the hub process; :meth:`close` removes all of it."""

    def __init__(self):
        tag = secrets.token_hex(3)
        self.instructor, self.students = f"pti{tag}", [f"pta{tag}", f"ptb{tag}"]
        self.passwords = {n: secrets.token_urlsafe(12) for n in [self.instructor, *self.students]}
        # Not under /tmp: the grading sandbox mounts its own /tmp, which would hide the users' venv (state/python).
        Path("/srv").mkdir(exist_ok=True)
        self.base = Path(tempfile.mkdtemp(prefix="pt-hub-test-", dir="/srv"))
        self.base.chmod(0o755)
        self.exchange, self.state = self.base / "exchange", self.base / "state"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.created: list[str] = []
        self.times: dict[str, float] = {}

    # --- set-up ---------------------------------------------------------------------------------------------
    def create_users(self) -> None:
        """Users as an administrator makes them (``useradd -m``: Debian 12's homes are 0755; the hub must fix it)."""
        for name in [self.instructor, *self.students]:
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
            self.created.append(name)
        subprocess.run(["chpasswd"], input="".join(f"{n}:{p}\n" for n, p in self.passwords.items()), text=True,
                       check=True)
        for name in self.students:  # render every cell, so that the test can reach the exercise's cell
            self.write_as(name, ".jupyter/lab/user-settings/@jupyterlab/notebook-extension/tracker.jupyterlab-settings",
                          json.dumps({"windowingMode": "none"}))

    def write_as(self, name: str, rel: str, text: str) -> Path:
        entry = pwd.getpwnam(name)
        path = Path(entry.pw_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for p in [path, *path.parents]:
            if p == Path(entry.pw_dir).parent:
                break
            os.chown(p, entry.pw_uid, entry.pw_gid)
        return path

    def create_course(self, users_python: str) -> Path:
        """The instructor's clone of the course (history included), with its own ``.venv`` inside, made as the README
        tells an instructor on a hub: ``make setup SHARED_VENV=<the installation's venv> PYTHON=<the hub's Python>``
        (the installation's packages, read-only; this clone's own ``course``)."""
        home = Path(pwd.getpwnam(self.instructor).pw_dir)
        self.course = home / "pytorch-internals"
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(self.course)], check=True)
        # The working tree as it is (a developer's uncommitted changes too; identical on CI's fresh clone).
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                                capture_output=True, check=True).stdout.decode().split("\0")
        for rel in filter(None, listed):
            if (REPO / rel).is_file() and not (REPO / rel).is_symlink():
                (self.course / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / rel, self.course / rel)
        entry = pwd.getpwnam(self.instructor)
        for p in [self.course, *self.course.rglob("*")]:
            os.lchown(p, entry.pw_uid, entry.pw_gid)
        t0 = time.time()
        out = subprocess.run(["make", "setup", f"SHARED_VENV={sys.prefix}", f"PYTHON={users_python}"], cwd=self.course,
                             user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "HOME": entry.pw_dir, "LANG": "C.UTF-8"})
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
        self.times["the instructor's clone: make setup SHARED_VENV=..."] = time.time() - t0
        return self.course

    def start(self, python: str = "") -> None:
        self.log = self.base / "hub.log"
        t0 = time.time()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "course.serving.hub", "--instructor", self.instructor,
             "--students", ",".join(self.students), "--course", str(self.course), "--exchange", str(self.exchange),
             "--state", str(self.state), "--port", str(self.port), *(["--python", python] if python else [])],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT, start_new_session=True, cwd=self.base)
        while time.time() - t0 < 120:
            try:
                with urllib.request.urlopen(f"{self.url}/hub/health", timeout=2) as r:
                    if r.status == 200:
                        self.times["hub start"] = time.time() - t0
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.3)
        raise RuntimeError(f"the hub did not start:\n{self.log.read_text()[-4000:]}")

    # --- the instructor's and students' command lines -------------------------------------------------------
    def env(self, name: str) -> dict[str, str]:
        from course.serving.hub import HubSettings, user_env
        settings = HubSettings(**json.loads((self.state / "private" / "hub.json").read_text()))
        return {**user_env(settings, name), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

    def run_as(self, name: str, argv: list[str], cwd: Path | None = None, check: bool = True,
               timeout: float = 600) -> subprocess.CompletedProcess:
        entry = pwd.getpwnam(name)
        out = subprocess.run(argv, user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], env=self.env(name),
                             cwd=cwd or entry.pw_dir, capture_output=True, text=True, timeout=timeout)
        if check and out.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} as {name} exited {out.returncode}:\n"
                                 f"{out.stdout[-3000:]}\n{out.stderr[-5000:]}")
        return out

    def python_as(self, name: str, code: str) -> str:
        py = self.env(name)["PATH"].split(":")[0] + "/python"
        return self.run_as(name, [py, "-c", code]).stdout

    def terminal(self, script: str, timeout: float = 900) -> subprocess.CompletedProcess:
        """``script`` typed into the instructor's hub terminal: the shell command the hub configured for it."""
        config = json.loads((self.state / "instructor-config" / "jupyter_server_config.json").read_text())
        shell = config["ServerApp"]["terminado_settings"]["shell_command"]
        entry = pwd.getpwnam(self.instructor)
        out = subprocess.run(shell, input=script + "\nexit $?\n", user=entry.pw_uid, group=entry.pw_gid,
                             extra_groups=[], env=self.env(self.instructor), cwd=entry.pw_dir, capture_output=True,
                             text=True, timeout=timeout)
        if out.returncode != 0:
            raise AssertionError(f"the instructor's terminal: {script!r} exited {out.returncode}:\n"
                                 f"{out.stdout[-3000:]}\n{out.stderr[-5000:]}")
        return out

    # --- tear-down ------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the users' processes (servers, kernels, sandboxes), then the hub, then remove users and folders."""
        uids = set()
        for name in self.created:
            try:
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                pass

        def kill_users() -> None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                for pid in processes_of(uids):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                time.sleep(1.0 if sig == signal.SIGTERM else 0.2)

        kill_users()  # first, so that the hub's shutdown does not wait for each server to stop
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        kill_users()
        for entry in Path("/tmp").iterdir():  # what the users left in /tmp (torch's caches, say): theirs only
            try:
                if entry.lstat().st_uid in uids:
                    shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
            except OSError:
                pass
        for name in self.created:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        unmount_under(self.base)
        shutil.rmtree(self.base, ignore_errors=True)


def unmount_under(base: Path) -> None:
    """Unmount what the hub mounted under ``base`` (inbound/'s filesystem), deepest first."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f if line.split()[4].startswith(f"{base}/")]
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def _free_port() -> int:
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def users_python():
    """The users' interpreter, made once per module (a copy of the course's where the course's is private)."""
    from course.serving import hub as H
    Path("/srv").mkdir(exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="pt-hub-python-", dir="/srv"))
    d.chmod(0o755)
    try:
        t0 = time.time()
        py, bindir = H.user_python(d)
        yield py, bindir, time.time() - t0
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def hub(users_python):
    if _missing():
        pytest.skip(_missing())
    h = Hub()
    h.times["the users' interpreter (made once per module)"] = users_python[2]
    try:
        h.create_users()
        h.create_course(users_python[0])
        h.start(users_python[0])
        yield h
    finally:
        h.close()
        leftovers = [n for n in h.created if _user_exists(n)]
        assert not leftovers, f"users left behind: {leftovers}"
        assert not h.base.exists(), f"{h.base} left behind"


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
    yield b
    b.close()
    pw.stop()


def start_log_in(browser, hub: Hub, name: str):
    """Log in on the hub's page (PAM); the hub then starts the user's server (waited for by :func:`lab_ready`)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.passwords[name])
    page.click("#login_submit")
    return page


def lab_ready(page, name: str):
    page.wait_for_url(re.compile(rf".*/user/{name}/lab.*"), timeout=180_000)
    page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Help')", timeout=180_000)
    return page


def menu(page, top: str, item: str) -> None:
    page.click(f".lm-MenuBar-itemLabel:text-is('{top}')")
    page.click(f".lm-Menu-itemLabel:text-is('{item}')")


def open_assignments(page, hub: Hub, name: str) -> None:
    page.goto(f"{hub.url}/user/{name}/lab?reset")
    page.wait_for_selector(".lm-MenuBar-itemLabel:text-is('Nbgrader')", timeout=120_000)
    menu(page, "Nbgrader", "Assignment List")
    page.wait_for_selector("text=Released assignments", timeout=60_000)
    page.wait_for_selector(f".list_item:has-text('{CHAPTER}')", timeout=60_000)


def type_answer(page, hub: Hub, name: str, answer: str) -> None:
    page.goto(f"{hub.url}/user/{name}/lab/tree/{CHAPTER}/{CHAPTER}.ipynb?reset")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=120_000)
    cell = page.locator(".jp-CodeCell", has_text=f"def {EXERCISE}(").filter(has_text="YOUR CODE HERE").first
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(answer)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # Save, and wait until the tab is clean. Under load a Ctrl+S can arrive before JupyterLab has taken the typed
    # text in (the tab turns dirty after the save) or the save request can be slow; press it again rather than
    # waiting once for a long time.
    for _ in range(6):
        page.keyboard.press("Control+s")
        try:
            page.wait_for_selector(".lm-TabBar-tab.jp-mod-current:not(.jp-mod-dirty)", timeout=20_000)
            page.wait_for_timeout(500)
            if page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count() == 0:
                return
        except PlaywrightTimeout:
            pass
    dialogs = page.locator(".jp-Dialog").all_inner_texts()
    raise AssertionError(f"{name}: the notebook stayed unsaved after 6 presses of Ctrl+S; dialogs open: {dialogs}")


def solution_in(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == EXERCISE)
    return "".join(cell["source"]).strip()


def status(url: str, page) -> int:
    response = page.goto(url)
    return response.status if response else 0


@needs_hub
def test_a_term_through_the_hub(hub, browser):
    try:
        _term(hub, browser)
    finally:
        for label, seconds in hub.times.items():
            print(f"[hub] {label}: {seconds:.1f} s")
        print(f"[hub] load average: {os.getloadavg()}")


def _term(hub, browser):
    t_term = time.time()
    step = {}

    def timed(label):
        step["label"], step["t"] = label, time.time()

    def done():
        hub.times[step["label"]] = time.time() - step["t"]

    correct, wrong = answers()
    typed = {hub.students[0]: correct["SOURCE"].strip(), hub.students[1]: wrong["SOURCE"].strip()}
    inst = hub.instructor
    SHOTS.mkdir(exist_ok=True)
    # The instructor's terminal has COURSE_EXCHANGE set; where the course's nbgrader_config.py reads it, the
    # commands run exactly as the README gives them, else the exchange is named on the command line.
    honours_env = "COURSE_EXCHANGE" in (hub.course / "nbgrader_config.py").read_text()
    exchange_flag = [] if honours_env else [f"--Exchange.root={hub.exchange}"]

    # 0. Everybody logs in at once; the hub starts the three servers side by side.
    timed("0 three log-ins (PAM) and server starts, at once")
    pages = {name: start_log_in(browser, hub, name) for name in [inst, *hub.students]}
    for name, page in pages.items():
        lab_ready(page, name)
    done()

    # Each student's server runs under a process cap of its own (a fork bomb stops there).
    from course.serving.hub import STUDENT_TASKS
    for name in hub.students:
        server = [pid for pid in processes_of({pwd.getpwnam(name).pw_uid})
                  if b"jupyterhub.singleuser" in cmdline_of(pid)]
        assert server, f"no server of {name}"
        limits = Path(f"/proc/{server[0]}/limits").read_text()
        assert re.search(rf"Max processes\s+{STUDENT_TASKS}\s+{STUDENT_TASKS}", limits), limits
    # Every user's temporary folder is private in their home (no /tmp squatting: torch's compile cache).
    for name in [inst, *hub.students]:
        tmp = Path(pwd.getpwnam(name).pw_dir) / ".tmp"
        assert tmp.is_dir() and tmp.stat().st_uid == pwd.getpwnam(name).pw_uid and tmp.stat().st_mode & 0o077 == 0
        assert hub.env(name)["TORCHINDUCTOR_CACHE_DIR"].startswith(pwd.getpwnam(name).pw_dir)
    # Each student has the course's landing page (theirs, in their home), and lands on it.
    for name in hub.students:
        page = Path(pwd.getpwnam(name).pw_dir) / "index.ipynb"
        assert page.is_file() and page.stat().st_uid == pwd.getpwnam(name).pw_uid
    assert "/lab/tree/index.ipynb" in pages[hub.students[0]].url, pages[hub.students[0]].url
    # The hub made every home and the instructor's course private, and its own checkout unlistable.
    for name in [inst, *hub.students]:
        assert Path(pwd.getpwnam(name).pw_dir).stat().st_mode & 0o077 == 0, f"{name}'s home is reachable by others"
    assert hub.course.stat().st_mode & 0o777 == 0o700

    # 0b. The instructor's terminal finds the course's tools and makes private files; one command readies the
    # fresh clone's gradebook.
    timed("0b instructor's terminal: make gradebook")
    term = hub.terminal(f"make gradebook CHAPTERS={CHAPTER} && umask && command -v nbgrader python")
    assert "0077" in term.stdout and f"{hub.course}/.venv/bin/nbgrader" in term.stdout, term.stdout[-2000:]
    assert f"gradebook.db knows: {CHAPTER}" in term.stdout
    done()

    # 1. The instructor releases the chapter with Formgrader's Release button (its own tab: no iframe on a hub).
    timed("1 instructor: Formgrader, generate and release")
    ipage = pages.pop(inst)
    ipage.goto(f"{hub.url}/user/{inst}/formgrader")
    row = ipage.locator(f"tr:has-text('{CHAPTER}')").first
    row.wait_for(timeout=120_000)
    # Generate (nbgrader generate_assignment: the student version, and the chapter's cells in the gradebook),
    # then Release: the two buttons of the chapter's row.
    row.locator(".assign a").click()
    modal = ipage.locator(".modal.in, .modal.show").filter(has_text="Successfully created the student version")
    modal.wait_for(timeout=180_000)
    modal.locator("button.close").first.click()
    modal.wait_for(state="hidden", timeout=30_000)
    row = ipage.locator(f"tr:has-text('{CHAPTER}')").first
    row.locator(".release a").click()
    ipage.wait_for_selector("text=Successfully released", timeout=120_000)
    ipage.screenshot(path=str(SHOTS / "hub-formgrader-release.png"))
    outbound = hub.exchange / "pytorch-internals" / "outbound" / CHAPTER
    assert (outbound / f"{CHAPTER}.ipynb").is_file(), "Formgrader did not release into the hub's exchange"
    assert outbound.stat().st_uid == pwd.getpwnam(inst).pw_uid
    assert not list(outbound.rglob("judge.py")), "the hidden tests were released"
    done()

    # 2. Each student logs in, fetches, answers Exercise 1.2 (typed in the browser), saves and submits.
    for name in hub.students:
        timed(f"2 {name}: fetch, edit, submit")
        page = pages[name]
        page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
        items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
        page.keyboard.press("Escape")
        assert "Assignment List" in items and not any("Formgrader" in i or "Create" in i for i in items), items
        open_assignments(page, hub, name)
        page.locator(f"#released_assignments_list > .list_item:has-text('{CHAPTER}') button:has-text('Fetch')").click()
        page.wait_for_selector(f"#fetched_assignments_list > .list_item:has-text('{CHAPTER}')", timeout=60_000)
        work = Path(pwd.getpwnam(name).pw_dir) / CHAPTER / f"{CHAPTER}.ipynb"
        assert work.is_file() and work.stat().st_uid == pwd.getpwnam(name).pw_uid, "Fetch did not make ~/<chapter>/"
        type_answer(page, hub, name, typed[name])
        assert solution_in(work) == typed[name], "the typed answer did not reach the saved notebook"
        open_assignments(page, hub, name)
        page.locator(f"#fetched_assignments_list > .list_item:has-text('{CHAPTER}') button:has-text('Submit')").click()
        page.wait_for_selector(f"#submitted_assignments_list > .list_item:has-text('{CHAPTER}')", timeout=60_000)
        assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").inner_text()
        page.screenshot(path=str(SHOTS / f"hub-student-{hub.students.index(name) + 1}-submitted.png"))
        done()

    # 3. The instructor collects, with nbgrader's own command (the course's nbgrader_config.py applies).
    timed("3 nbgrader collect")
    hub.terminal(" ".join(["nbgrader", "collect", CHAPTER, *exchange_flag]))
    for name in hub.students:
        collected = hub.course / "submitted" / name / CHAPTER / f"{CHAPTER}.ipynb"
        assert collected.is_file(), f"{name}'s submission was not collected"
        assert solution_in(collected) == typed[name], f"{name}: the collected notebook is not the edited one"
    done()

    # 4. grade-class grades through the judge.
    # 3b. The instructor grades one submission from Formgrader (its autograde button: the judge runs inside the
    # instructor's server, as the instructor).
    timed("3b Formgrader: autograde one submission")
    ipage.goto(f"{hub.url}/user/{inst}/formgrader/manage_submissions/{CHAPTER}")
    row = ipage.locator(f"tr:has-text('{hub.students[0]}')").first
    row.wait_for(timeout=60_000)
    row.locator(".autograde a").click()
    verdict = ipage.locator("#success-modal, #error-modal").first
    verdict.wait_for(timeout=600_000)
    assert "Successfully autograded" in verdict.inner_text(), verdict.inner_text()[-3000:]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}", course_id="pytorch-internals") as gb:
        first = gb.find_submission(CHAPTER, hub.students[0]).score
    exercise_points = sum(p for g, p in grade_cells(hub.course / "release" / CHAPTER / f"{CHAPTER}.ipynb").items()
                          if g.startswith(f"test_{EXERCISE}"))
    assert first == pytest.approx(exercise_points), (first, exercise_points)
    done()

    # Meanwhile the second student watches /tmp for the grader's scratch (reference values, seeds, kernels' keys)
    # and pokes at whatever looks like the judge's decoy course, to get the honest classmate flagged.
    timed("4 grade-class (the instructor, in their terminal), a classmate watching /tmp")
    stop = hub.base / "stop-watching"
    watcher = subprocess.Popen(
        [hub.env(hub.students[1])["PATH"].split(":")[0] + "/python", "-c", WATCHER, str(pwd.getpwnam(inst).pw_uid),
         str(stop)], user=pwd.getpwnam(hub.students[1]).pw_uid, group=pwd.getpwnam(hub.students[1]).pw_gid,
        extra_groups=[], env=hub.env(hub.students[1]), cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        out = hub.terminal(f"python -m course.grading grade-class {CHAPTER} --jobs 2")
    finally:
        stop.touch()
        seen = watcher.communicate(timeout=60)[0]
    print(out.stdout[-3000:])
    print("[watcher]", seen[-1500:])
    # The grader's temporary files live in the instructor's home now (TMPDIR=~/.tmp); whatever of theirs is in
    # /tmp all the same, the watcher could neither list nor read.
    assert "WATCHED" in seen and "READ" not in seen and "LISTED" not in seen, seen[-3000:]
    report = json.loads((hub.course / ".judge" / "reports" / CHAPTER / f"{hub.students[0]}.json").read_text())
    assert not any("tamper" in str(f) for f in report.get("flags", [])), report.get("flags")
    done()
    from nbgrader.api import Gradebook
    points = grade_cells(hub.course / "release" / CHAPTER / f"{CHAPTER}.ipynb")
    exercise = {g: p for g, p in points.items() if g.startswith(f"test_{EXERCISE}")}
    lost = set(wrong["FAILS"])
    assert lost and lost <= set(exercise), (lost, exercise)
    expected = {hub.students[0]: sum(exercise.values()), hub.students[1]: sum(exercise.values()) - sum(
        exercise[g] for g in lost)}
    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}", course_id="pytorch-internals") as gb:
        for name in hub.students:
            sub = gb.find_submission(CHAPTER, name)
            scores = {g: gb.find_grade(g, CHAPTER, CHAPTER, name).score for g in points}
            for g, p in points.items():
                if g in exercise:
                    want = 0.0 if (name == hub.students[1] and g in lost) else p
                else:
                    want = 0.0  # exercises the student did not answer
                assert scores[g] == pytest.approx(want), (name, g, scores[g], want)
            assert sub.score == pytest.approx(expected[name]), (name, sub.score, expected[name])

    # 5. The instructor releases the feedback.
    timed("5 generate_feedback + release_feedback")
    hub.terminal(f"nbgrader generate_feedback {CHAPTER} && " + " ".join(["nbgrader", "release_feedback", CHAPTER,
                                                                          *exchange_flag]))
    feedback_dir = hub.exchange / "pytorch-internals" / "feedback"
    assert len(list(feedback_dir.glob("*.html"))) == 2
    assert feedback_dir.stat().st_mode & 0o777 == 0o711
    done()

    # 6. Each student fetches their own feedback, sees their own score, and cannot reach the other's.
    total = sum(points.values())
    for name in hub.students:
        timed(f"6 {name}: fetch feedback")
        other = hub.students[1 - hub.students.index(name)]
        page = pages[name]
        open_assignments(page, hub, name)
        row = page.locator(f"#submitted_assignments_list > .list_item:has-text('{CHAPTER}')").first
        row.locator("button:has-text('Fetch Feedback')").click()
        page.wait_for_selector(f"#submitted_assignments_list a:has-text('view feedback')", timeout=60_000)
        page.screenshot(path=str(SHOTS / f"hub-student-{hub.students.index(name) + 1}-feedback.png"))
        home = Path(pwd.getpwnam(name).pw_dir)
        (html,) = (home / CHAPTER / "feedback").glob(f"*/{CHAPTER}.html")
        rel = html.relative_to(home)
        assert status(f"{hub.url}/user/{name}/files/{rel}", page) == 200
        text = page.locator("body").inner_text()
        score = re.search(r"Score:\s*([0-9.]+)\s*/\s*([0-9.]+)", text)
        assert score, text[:1500]
        assert float(score.group(1)) == pytest.approx(expected[name]) and float(score.group(2)) == pytest.approx(total)
        # Through the hub: the other student's server and files are forbidden.
        assert status(f"{hub.url}/user/{other}/files/{rel}", page) == 403
        assert status(f"{hub.url}/user/{other}/api/contents/{CHAPTER}", page) == 403
        assert "Score:" not in page.locator("body").inner_text()
        # On the filesystem, as the student's own Unix user.
        probe = hub.python_as(name, f"""
import os
for path in [{str(feedback_dir)!r}, {str(hub.exchange / 'pytorch-internals' / 'inbound')!r},
             {str(Path(pwd.getpwnam(other).pw_dir))!r}, {str(hub.course)!r}]:
    try:
        os.listdir(path)
        print('LISTED', path)
    except PermissionError:
        print('denied', path)
try:
    open({str(Path(pwd.getpwnam(other).pw_dir) / rel)!r}).read()
    print('READ other feedback')
except PermissionError:
    print('denied other feedback')
""")
        assert "LISTED" not in probe and "READ" not in probe, probe
        assert probe.count("denied") == 5, probe
        # Nothing of the answer key, the class's grades or the grader's files, by any path a student could try.
        tries = hub.python_as(name, STUDENT_READS.format(course=str(hub.course), checkout=str(REPO), chapter=CHAPTER,
                                                         home=str(Path(pwd.getpwnam(other).pw_dir))))
        assert "GOT" not in tries and tries.count("refused") >= 20, tries
        git = hub.run_as(name, ["git", f"--git-dir={hub.course}/.git", "show", f"HEAD:source/{CHAPTER}/judge.py"],
                         check=False)
        assert git.returncode != 0 and "def " not in git.stdout, git.stdout[:500]
        git = hub.run_as(name, ["git", f"--git-dir={REPO}/.git", "show", f"HEAD:source/{CHAPTER}/judge.py"],
                         check=False)
        assert git.returncode != 0 and "def " not in git.stdout, git.stdout[:500]
        # The helpers a student imports come from the hub's student-lib, which holds nothing else.
        where = hub.python_as(name, "import course, importlib.util; print(course.__file__); "
                                    "print(importlib.util.find_spec('course.grading'))")
        assert where.splitlines() == [str(hub.state / "student-lib" / "course" / "__init__.py"), "None"], where
        done()

    # 7. After every command the course is still private, and so is every home.
    assert hub.course.stat().st_mode & 0o777 == 0o700
    for name in [inst, *hub.students]:
        assert Path(pwd.getpwnam(name).pw_dir).stat().st_mode & 0o077 == 0

    hub.times["the term (steps 1-6)"] = time.time() - t_term


#: Run by a student while the instructor grades: every entry of /tmp that the grader owns is watched; anything of
#: it the student can list or read is printed (LISTED/READ); so is each decoy-looking path it could touch.
WATCHER = r"""
import glob, os, sys, time
grader, stop = int(sys.argv[1]), sys.argv[2]
watched, deadline = set(), time.time() + 900
while not os.path.exists(stop) and time.time() < deadline:
    for entry in os.scandir("/tmp"):
        try:
            if entry.stat(follow_symlinks=False).st_uid != grader:
                continue
        except OSError:
            continue
        watched.add(entry.path)
        for dirpath, dirs, files in os.walk(entry.path, onerror=lambda e: None):
            print("LISTED", dirpath, flush=True)
            for f in files:
                try:
                    open(os.path.join(dirpath, f), "rb").read(64)
                    print("READ", os.path.join(dirpath, f), flush=True)
                except OSError:
                    pass
    for pattern in ("/tmp/*/course/source", "/tmp/*/*/course/source", "/tmp/*/*/*/course/source"):
        for hit in glob.glob(pattern):
            try:
                os.listdir(hit)
                print("LISTED", hit, flush=True)
            except OSError:
                pass
    time.sleep(0.05)
print("WATCHED", len(watched), sorted(watched)[:5])
"""

#: A student's attempts to read what is not theirs (each must be refused).
STUDENT_READS = r"""
import os
course, checkout, chapter, home = {course!r}, {checkout!r}, {chapter!r}, {home!r}
paths = [f"{{course}}/source/{{chapter}}/judge.py", f"{{course}}/.git/HEAD", f"{{course}}/.git/config",
         f"{{course}}/.judge/secret", f"{{course}}/gradebook.db", f"{{course}}/grades.csv",
         f"{{course}}/nbgrader_config.py", f"{{course}}/source/{{chapter}}/exercises",
         f"{{course}}/source/{{chapter}}/exercises/profiles.json", f"{{course}}/submitted", f"{{course}}/autograded",
         f"{{course}}/feedback", f"{{course}}/.judge", f"{{checkout}}/source/{{chapter}}/judge.py", f"{{checkout}}/.git/HEAD",
         f"{{checkout}}/.git", f"{{checkout}}/source", f"{{checkout}}/source/{{chapter}}/exercises",
         f"{{checkout}}/source/{{chapter}}/exercises/profiles.json", f"{{checkout}}/.judge",
         f"{{checkout}}", f"{{home}}", f"{{home}}/{{chapter}}", f"{{course}}"]
for p in paths:
    try:
        if os.path.isdir(p) or p in (course, checkout, home):
            os.listdir(p)
        else:
            open(p, "rb").read(16)
        print("GOT", p)
    except OSError as err:
        print("refused", p, type(err).__name__)
"""


# --- The hub's pieces, without a browser (seconds) -----------------------------------------------------------

@pytest.fixture
def srv_dir():
    """A scratch folder every user can reach (pytest's tmp_path is under /tmp/pytest-of-root, 0700)."""
    Path("/srv").mkdir(exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="pt-hub-unit-", dir="/srv"))
    d.chmod(0o755)
    yield d
    unmount_under(d)  # what the hub mounted there (inbound/'s filesystem, by --prepare-only too)
    shutil.rmtree(d, ignore_errors=True)
    assert not d.exists(), f"{d} left behind"


def test_exchange_gets_nbgraders_modes_and_the_instructor_owns_the_course(srv_dir):
    from course.serving import hub as H
    squatted = srv_dir / "exchange" / "pytorch-internals" / "inbound"
    squatted.mkdir(parents=True)
    os.chown(squatted, 0, 0)
    squatted.chmod(0o777)
    ex = H.prepare_exchange(srv_dir / "exchange", "nobody")
    nobody = pwd.getpwnam("nobody").pw_uid
    modes = {p.relative_to(ex).as_posix() or ".": (p.stat().st_mode & 0o7777, p.stat().st_uid)
             for p in [ex, *ex.rglob("*")]}
    assert modes == {".": (0o1777, 0), "pytorch-internals": (0o755, nobody),
                     "pytorch-internals/outbound": (0o755, nobody), "pytorch-internals/inbound": (0o3733, nobody),
                     "pytorch-internals/feedback": (0o711, nobody)}, modes


def test_exchange_must_be_reachable_by_every_user(tmp_path):
    from course.serving import hub as H
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    with pytest.raises(SystemExit, match="not reachable"):
        H.prepare_exchange(private / "exchange", "nobody")


def test_users_python_runs_the_course_packages_as_another_user(users_python):
    from course.serving import hub as H
    py, bindir, _ = users_python
    assert H.readable_by_others(Path(py), execute=True)
    code = ("import sys, nbgrader, jupyterhub.singleuser, course.submit, course.lab; "
            "print(sys.executable, nbgrader.__version__)")
    out = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", py, "-c", code],
                         capture_output=True, text=True, env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": "/"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "0.9.6" in out.stdout
    nbgrader = Path(bindir) / "nbgrader"
    assert nbgrader.read_text().startswith(f"#!{py}\n"), "console scripts must start the users' interpreter"
    headers = subprocess.run([py, "-c", "import sysconfig, os; print(os.path.isfile(os.path.join("
                              "sysconfig.get_paths()['include'], 'Python.h')))"], capture_output=True, text=True)
    assert headers.stdout.strip() == "True", "torch.compile on the CPU needs Python.h in the users' interpreter"
    lab_static = Path(py).parent.parent / "share" / "jupyter" / "lab" / "static"
    assert lab_static.is_dir(), "JupyterLab's assets must be found from the users' interpreter"


def test_hub_configuration_is_loopback_pam_and_per_role(srv_dir):
    from traitlets.config import Config
    from course.serving import hub as H
    s = H.HubSettings(course=str(srv_dir / "course"), instructor="root", students=["nobody"],
                      exchange=str(srv_dir / "exchange"), state=str(srv_dir / "state"), port=18123, hub_port=18124,
                      proxy_api_port=18125, python="/x/bin/python", bindir="/x/bin", proxy="/x/bin/chp",
                      instructor_python="/y/bin/python", instructor_bindir="/y/bin")
    c = Config()
    H.configure(c, s)
    assert c.JupyterHub.bind_url == "http://127.0.0.1:18123" and c.JupyterHub.hub_ip == "127.0.0.1"
    assert c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:18125"
    assert c.JupyterHub.authenticator_class == "pam" and c.Authenticator.allowed_users == {"root", "nobody"}
    assert c.Spawner.cmd == ["/x/bin/python", "-m", "jupyterhub.singleuser"]

    class Spawner:
        def __init__(self, name):
            self.user = type("U", (), {"name": name})()
            self.environment, self.notebook_dir, self.cmd = {}, "", list(c.Spawner.cmd)
            self.default_url = c.Spawner.default_url

    student, instructor = Spawner("nobody"), Spawner("root")
    c.Spawner.pre_spawn_hook(student)
    c.Spawner.pre_spawn_hook(instructor)
    assert student.environment["JUPYTER_CONFIG_PATH"] == str(s.student_config) and student.notebook_dir == "~"
    assert instructor.environment["JUPYTER_CONFIG_PATH"] == str(s.instructor_config)
    assert instructor.notebook_dir == s.course
    assert student.environment["PATH"].startswith("/x/bin:")
    assert student.cmd == ["prlimit", f"--nproc={H.STUDENT_TASKS}", "--core=0", "--", "/x/bin/python", "-m",
                           "jupyterhub.singleuser"], student.cmd
    assert instructor.environment["PATH"].startswith("/y/bin:")
    # The instructor's server (and so its kernels and terminals) makes private files: umask 077, then the server.
    assert instructor.cmd[:3] == ["/bin/sh", "-c", 'umask 077 && exec "$@"'], instructor.cmd
    assert instructor.cmd[4:] == ["/y/bin/python", "-m", "jupyterhub.singleuser"], instructor.cmd
    for env in (student.environment, instructor.environment):
        assert env["COURSE_EXCHANGE"] == s.exchange
    # Students import the helpers from the hub's student-lib only; the instructor's commands know the course.
    assert student.environment["PYTHONPATH"] == str(srv_dir / "state" / "student-lib")
    assert student.environment["PYTHONSTARTUP"].endswith("course-run-recorder.py") and "COURSE_RUN_LOG" in \
        student.environment
    assert student.default_url == "/lab/tree/index.ipynb", "students land on the course's landing page"
    assert "PYTHONPATH" not in instructor.environment and instructor.environment["COURSE_HUB_COURSE"] == s.course


def test_hub_command_line_refuses_what_cannot_work(srv_dir, capsys):
    from course.serving import hub as H
    assert H.main(["--instructor", "root", "--students", "no-such-user-xyz", "--course", str(REPO)]) == 2
    assert "no-such-user-xyz" in capsys.readouterr().err
    assert H.main(["--instructor", "root", "--students", "nobody", "--course", str(srv_dir)]) == 2
    assert "not the course folder" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="not under /tmp"):
        H.main(["--instructor", "root", "--students", "nobody", "--course", str(REPO), "--state", "/tmp/x-hub",
                "--exchange", str(srv_dir / "ex"), "--prepare-only"])


def test_hub_prepare_only_writes_the_configuration(srv_dir, capsys):
    from course.serving import hub as H
    course = srv_dir / "course"
    course.mkdir()
    shutil.copy(REPO / "nbgrader_config.py", course / "nbgrader_config.py")
    (course / "source").mkdir()
    (course / "source").chmod(0o755)
    args = ["--instructor", "nobody", "--students", "nobody", "--course", str(course), "--state",
            str(srv_dir / "state"), "--exchange", str(srv_dir / "ex"), "--python", "/usr/bin/python3", "--prepare-only"]
    assert H.main(args) == 2, "a course the instructor does not own is refused"
    assert "not owned by nobody" in capsys.readouterr().err
    for p in [course, *course.rglob("*")]:
        _owned_by(p, "nobody")
    assert H.main(["--instructor", "nobody", "--students", "nobody", "--course", str(course), "--state",
                   str(srv_dir / "state"), "--exchange", str(srv_dir / "ex"), "--python", "/usr/bin/python3",
                   "--prepare-only"]) == 0
    captured = capsys.readouterr()
    assert course.stat().st_mode & 0o777 == 0o700, "the hub makes the instructor's course private"
    private = srv_dir / "state" / "private"
    assert private.stat().st_mode & 0o777 == 0o700
    settings = json.loads((private / "hub.json").read_text())
    assert settings["ip"] == "127.0.0.1" and settings["exchange"] == str(srv_dir / "ex")
    assert settings["python"] == "/usr/bin/python3" and settings["bindir"] == "/usr/bin"
    student_cfg = (srv_dir / "state" / "student-config" / "nbgrader_config.py").read_text()
    assert "path_includes_course = False" in student_cfg and str(srv_dir / "ex") in student_cfg
    inst_cfg = (srv_dir / "state" / "instructor-config" / "nbgrader_config.py").read_text()
    assert f"load_subconfig({str(course / 'nbgrader_config.py')!r})" in inst_cfg
    assert "post_convert_hook" in inst_cfg and "atexit.register(after_command)" in inst_cfg
    # The instructor's terminal: not a login shell (Debian's /etc/profile resets PATH), the course's tools first.
    inst_server = json.loads((srv_dir / "state" / "instructor-config" / "jupyter_server_config.json").read_text())
    shell = inst_server["ServerApp"]["terminado_settings"]["shell_command"]
    assert shell[:2] == ["/bin/bash", "--rcfile"] and "-l" not in shell
    bashrc = Path(shell[2]).read_text()
    assert "export PATH=/usr/bin:$PATH" in bashrc and "umask 077" in bashrc
    lib = srv_dir / "state" / "student-lib" / "course"
    assert (lib / "submit.py").is_file() and not (lib / "grading").exists() and not (lib / "serving").exists()
    assert all(p.stat().st_uid == 0 and not p.stat().st_mode & 0o022 for p in [lib, *lib.rglob("*")])
    server = json.loads((srv_dir / "state" / "student-config" / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is False


# --- Root does the least: no link followed, no code another user can change -----------------------------------

def _owned_by(path: Path, name: str) -> None:
    entry = pwd.getpwnam(name)
    os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def test_exchange_preparation_follows_no_link(srv_dir):
    """A link planted where the exchange (or its course folder) will be is refused; its target is untouched."""
    from course.serving import hub as H
    victim = srv_dir / "victim"
    victim.mkdir(mode=0o700)
    (srv_dir / "exchange").symlink_to(victim)
    with pytest.raises(SystemExit, match="not a plain folder"):
        H.prepare_exchange(srv_dir / "exchange", "nobody")
    assert victim.stat().st_uid == 0 and victim.stat().st_mode & 0o7777 == 0o700
    (srv_dir / "exchange").unlink()
    (srv_dir / "exchange").mkdir()
    (srv_dir / "exchange" / "pytorch-internals").symlink_to(victim)
    with pytest.raises(SystemExit, match="not a plain folder"):
        H.prepare_exchange(srv_dir / "exchange", "nobody")
    assert victim.stat().st_uid == 0 and victim.stat().st_mode & 0o7777 == 0o700
    (srv_dir / "exchange" / "pytorch-internals").unlink()
    (srv_dir / "exchange" / "pytorch-internals").mkdir()
    (srv_dir / "exchange" / "pytorch-internals" / "inbound").symlink_to(victim)
    with pytest.raises(SystemExit, match="not a plain folder"):
        H.prepare_exchange(srv_dir / "exchange", "nobody")
    assert victim.stat().st_uid == 0 and victim.stat().st_mode & 0o7777 == 0o700


def test_exchange_refuses_a_squatter_and_an_unsafe_parent(srv_dir):
    from course.serving import hub as H
    (srv_dir / "ex" / "pytorch-internals").mkdir(parents=True)
    _owned_by(srv_dir / "ex" / "pytorch-internals", "daemon")  # made by someone else before the hub ran
    with pytest.raises(SystemExit, match="squatted"):
        H.prepare_exchange(srv_dir / "ex", "nobody")
    open_parent = srv_dir / "open"
    open_parent.mkdir()
    open_parent.chmod(0o777)  # anyone could swap the exchange for a link while root works
    with pytest.raises(SystemExit, match="writable by"):
        H.prepare_exchange(open_parent / "exchange", "nobody")


def test_root_runs_no_code_another_user_can_change(srv_dir):
    from course.serving import hub as H
    assert H.root_problems(H.find_proxy()) == [], "the test's own checkout must be root's"
    code = srv_dir / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "mod.py").write_text("x = 1\n")
    assert H.root_code_problems([code / "pkg" / "mod.py"], walk=[code]) == []
    _owned_by(code / "pkg" / "mod.py", "nobody")
    assert any("mod.py belongs to uid" in p for p in H.root_code_problems([], walk=[code]))
    _owned_by(code / "pkg" / "mod.py", "root")
    (code / "pkg").chmod(0o777)
    assert any("writable by users other than root" in p for p in H.root_code_problems([code / "pkg" / "mod.py"]))


def test_lockdown_makes_the_course_and_homes_private_and_the_checkout_unlistable(srv_dir):
    from course.serving import hub as H
    course = srv_dir / "course"
    (course / "source").mkdir(parents=True)
    course.chmod(0o755)
    assert H.exposed(course)
    assert H.lockdown_private(course) and course.stat().st_mode & 0o777 == 0o700
    checkout = srv_dir / "checkout"
    for d in (".git", "source", ".venv", "course"):
        (checkout / d).mkdir(parents=True)
    (checkout / "gradebook.db").write_text("x")
    (checkout / "gradebook.db").chmod(0o644)
    outside = srv_dir / "outside"
    outside.mkdir(mode=0o755)
    (checkout / "link").symlink_to(outside)  # never followed
    H.lockdown_checkout(checkout)
    assert checkout.stat().st_mode & 0o777 == 0o711
    assert {p.name for p in checkout.iterdir() if p.lstat().st_mode & 0o007 and not p.is_symlink()} == {".venv", "course"}
    assert outside.stat().st_mode & 0o777 == 0o755
    assert H.lockdown_problems(course, checkout, []) == []
    (checkout / "source").chmod(0o755)
    assert H.lockdown_problems(course, checkout, []) == [f"{checkout / 'source'} is reachable by other users"]


def test_grading_commands_keep_their_scratch_in_a_private_folder(tmp_path):
    """What a grading command writes to the temporary folder (sandboxes, kernels' connection files, reference
    values) lies in a 0700 folder of the grader's own, passed on to its children through TMPDIR."""
    code = ("import os, tempfile; from course.grading.run.scratch import private_tmpdir; base = private_tmpdir(); "
            "print(base, oct(os.stat(base).st_mode & 0o777), tempfile.mkdtemp().startswith(base), "
            "private_tmpdir() == base)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "TMPDIR": str(tmp_path)}).stdout.split()
    assert out[1:] == ["0o700", "True", "True"], out
    assert Path(out[0]).parent == tmp_path and not Path(out[0]).exists(), "removed at exit"


def test_inbound_gets_a_filesystem_of_its_own(srv_dir):
    """``inbound/`` on its own ext4 image (nosuid, nodev, noexec): a student's fallocate cannot fill the disk."""
    from course.serving import hub as H
    inbound = srv_dir / "inbound"
    inbound.mkdir()
    try:
        said = H.mount_inbound(inbound, srv_dir / "inbound.ext4", 64 * 1024**2, *H.ids("nobody"))
        assert "filesystem of its own" in said and H.is_mount_point(inbound)
        assert inbound.stat().st_mode & 0o7777 == 0o3733 and inbound.stat().st_uid == H.ids("nobody")[0]
        assert os.listdir(inbound) == [], "no lost+found for collect to trip on"
        options = next(line.split()[5] for line in open("/proc/self/mountinfo") if line.split()[4] == str(inbound))
        assert {"nosuid", "nodev", "noexec"} <= set(options.split(",")), options
        big = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "fallocate", "-l",
                              "256M", str(inbound / "big")], capture_output=True, text=True)
        assert big.returncode != 0 and "No space left" in big.stderr, big
        assert "already" in H.mount_inbound(inbound, srv_dir / "inbound.ext4", 64 * 1024**2, *H.ids("nobody"))
        # A link where inbound/ should be is refused (the mount goes through a descriptor opened without
        # following links, so no swap after the check can redirect it either).
        target = srv_dir / "target"
        target.mkdir(mode=0o700)
        other = srv_dir / "other"
        other.mkdir()
        (other / "inbound").symlink_to(target)
        with pytest.raises(OSError):
            H.mount_inbound(other / "inbound", srv_dir / "other.ext4", 64 * 1024**2, *H.ids("nobody"))
        assert not H.is_mount_point(target) and target.stat().st_mode & 0o7777 == 0o700
    finally:
        unmount_under(srv_dir)


def test_inbound_guard_keeps_each_submission_under_its_limit(srv_dir):
    from course.serving import hub as H
    inbound = srv_dir / "inbound"
    inbound.mkdir()

    def submission(name, owner, size=0, entries=0, age=0.0):
        d = inbound / name
        d.mkdir()
        if size:
            with open(d / "x.ipynb", "wb") as f:
                os.posix_fallocate(f.fileno(), 0, size)
        for i in range(entries):
            (d / f"e{i}").mkdir()
        for p in [d, *d.rglob("*")]:
            _owned_by(p, owner)
        os.utime(d, (time.time() - age, time.time() - age))
        return d

    honest = submission("alice+01+2026-12-04 10:00:00.000000 UTC+abc", "nobody", size=1 << 20)
    submission("bob+01+2026-12-04 10:00:00.000000 UTC+big", "daemon", size=3 << 20)
    submission("bob+01+2026-12-04 10:00:01.000000 UTC+many", "daemon", entries=60)
    (inbound / "stray-file").write_text("x")
    (inbound / "link").symlink_to(srv_dir)
    old = submission("carol+01+2026-12-04 09:00:00.000000 UTC+old", "bin", size=2 << 20, age=100)
    new = submission("carol+01+2026-12-04 10:00:00.000000 UTC+new", "bin", size=2 << 20)
    # A folder nested far deeper than Python's recursion limit (it killed the first guard), and a student who
    # spreads entries over many small submissions (inodes run out before bytes do).
    deep = inbound / "dave+01+2026-12-04 10:00:00.000000 UTC+deep"
    fd = os.open(inbound, os.O_RDONLY)
    os.mkdir(deep.name, dir_fd=fd)
    level = os.open(deep.name, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    for _ in range(1100):
        os.mkdir("d", dir_fd=level)
        nxt = os.open("d", os.O_RDONLY, dir_fd=level)
        os.close(level)
        level = nxt
    os.close(level)
    for i in range(4):
        submission(f"erin+01+2026-12-04 10:00:0{i}.000000 UTC+s{i}", "games", entries=40, age=10 - i)
    bad_name = os.fsencode("frank+01+x") + b"\xff"
    os.mkdir(os.path.join(os.fsencode(inbound), bad_name))
    (honest / "x.ipynb").chmod(0o666)
    honest.chmod(0o777)
    removed = H.guard_inbound_once(inbound, per_submission=2_500_000, per_student=3_000_000, entries=50,
                                   student_entries=100, log=lambda m: None)
    assert len(removed) == 8, removed
    assert sorted(p.name for p in inbound.iterdir()) == sorted(
        [honest.name, new.name, os.fsdecode(bad_name), "erin+01+2026-12-04 10:00:02.000000 UTC+s2",
         "erin+01+2026-12-04 10:00:03.000000 UTC+s3"]), list(inbound.iterdir())
    assert srv_dir.is_dir() and not old.exists() and not deep.exists()
    assert honest.stat().st_mode & 0o777 == 0o755 and (honest / "x.ipynb").stat().st_mode & 0o777 == 0o644, \
        "a submission loses its write bits for others"


def test_the_landing_page_is_written_as_no_link_a_student_planted(srv_dir):
    from course.serving import hub as H
    page = srv_dir / "index.ipynb"
    page.write_text("{}")
    victim = srv_dir / "victim"
    victim.write_text("root's")
    home = srv_dir / "home"
    home.mkdir()
    _owned_by(home, "nobody")
    (home / "index.ipynb").symlink_to(victim)
    assert H.give_landing_page(page, "nobody", str(home)) is False
    assert victim.read_text() == "root's" and victim.stat().st_uid == 0
    (home / "index.ipynb").unlink()
    assert H.give_landing_page(page, "nobody", str(home)) is True
    assert (home / "index.ipynb").read_text() == "{}" and (home / "index.ipynb").stat().st_uid == H.ids("nobody")[0]
    (home / "index.ipynb").write_text("the student's own")
    assert H.give_landing_page(page, "nobody", str(home)) is False, "a student's own file is never replaced"
    assert (home / "index.ipynb").read_text() == "the student's own"


def test_a_private_tmp_is_made_as_no_link_a_student_planted(srv_dir):
    from course.serving import hub as H
    home = srv_dir / "home"
    home.mkdir()
    _owned_by(home, "nobody")
    victim = srv_dir / "victim"
    victim.mkdir(mode=0o755)
    (home / ".tmp").symlink_to(victim)
    assert H.give_private_tmp("nobody", str(home)) is False
    assert victim.stat().st_uid == 0 and victim.stat().st_mode & 0o777 == 0o755
    (home / ".tmp").unlink()
    assert H.give_private_tmp("nobody", str(home)) is True
    st = (home / ".tmp").stat()
    assert st.st_uid == H.ids("nobody")[0] and st.st_mode & 0o777 == 0o700
