"""A class on one machine: JupyterHub for the students and the instructor, nbgrader's exchange between them.

``python -m course.grading hub --instructor NAME --students NAME,NAME [...]`` (``make hub``), as root, starts
JupyterHub (PyPI) behind ``configurable-http-proxy`` (npm) on loopback, for real local Unix users:

* **Log-in**: PAM, JupyterHub's default: the users' own system passwords; only the named users may log in.
* **Students**: a JupyterLab server each, started as that user in their home folder, with the course's Python
  packages and the student's nbgrader configuration (:func:`course.lab.write_student_config`, in
  ``JUPYTER_CONFIG_PATH``): the Assignments tab and Validate, no Formgrader and no Create Assignment. Fetch
  makes ``~/<chapter>/``, the one working copy; Submit hands it in (and says so when nothing was answered).
* **The instructor**: a JupyterLab server rooted at the course folder (``--course``, owned by the
  instructor), with Formgrader (open ``/user/<instructor>/formgrader`` in its own tab: JupyterHub >= 4.1 forbids
  the iframe) and ``COURSE_EXCHANGE`` set to the shared exchange in every terminal.
* **The exchange** (``--exchange``, default nbgrader's ``/usr/local/share/nbgrader/exchange``): the modes
  nbgrader documents and sets itself: the root ``1777`` (nbgrader asks for ``0777``; the sticky bit also stops a
  student renaming the instructor's course folder), ``<course_id>/`` and ``outbound/`` ``0755``, ``inbound/``
  ``2733`` (students can add, not list), ``feedback/`` ``0711`` (students can read a file whose name they know,
  the hash of their own submission's secret, not list). All of it is created here, owned by the instructor,
  before any student can squat the names.
* **State** (``--state``, default ``/srv/pytorch-internals-hub``): ``private/`` (``0700``: the hub's database,
  cookie secret, proxy token, configuration and log), ``student-config/`` and ``instructor-config/`` (read by
  the users' servers), and, where the course's Python interpreter is not readable by other users (a pyenv
  under ``/root``), ``python/``: a copy of that same interpreter (standard library and ``libpython``, about
  90 MB) that imports the course venv's packages (a ``.pth``) and shares its Jupyter data, so every user
  runs exactly the course's interpreter and packages.

Everything listens on ``--ip`` (default ``127.0.0.1``). The instructor's command line, in their hub terminal
(``COURSE_EXCHANGE`` is set there): ``nbgrader release_assignment CH``, ``nbgrader collect CH``,
``python -m course.grading grade-class CH``, ``nbgrader generate_feedback CH``, ``nbgrader release_feedback CH``.
``tests/test_hub.py`` runs that whole term through the hub in headless Chromium.
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

COURSE_ID = "pytorch-internals"
DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"
DEFAULT_STATE = "/srv/pytorch-internals-hub"


@dataclass
class HubSettings:
    """Everything the hub's configuration needs (written as JSON beside ``jupyterhub_config.py``)."""

    course: str
    instructor: str
    students: list[str]
    exchange: str
    state: str
    ip: str = "127.0.0.1"
    port: int = 8000
    hub_port: int = 0
    proxy_api_port: int = 0
    python: str = ""              # the interpreter the students' servers run
    bindir: str = ""              # first on their PATH (nbgrader, jupyter, alembic)
    instructor_python: str = ""   # the instructor's (default: the students')
    instructor_bindir: str = ""
    proxy: str = ""               # configurable-http-proxy
    course_id: str = COURSE_ID
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def private(self) -> Path:
        return Path(self.state) / "private"

    @property
    def student_config(self) -> Path:
        return Path(self.state) / "student-config"

    @property
    def instructor_config(self) -> Path:
        return Path(self.state) / "instructor-config"


# --- the machine: users, permissions, the interpreter ---------------------------------------------------------

def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def readable_by_others(path: Path, execute: bool = False) -> bool:
    """Whether a user other than the owner (and not in its group) can reach ``path`` (and read, or run, it)."""
    path = Path(path).resolve()
    for parent in reversed(path.parents):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(path).st_mode
    if path.is_dir():
        return bool(mode & stat.S_IXOTH and mode & stat.S_IROTH)
    return bool(mode & stat.S_IROTH and (not execute or mode & stat.S_IXOTH))


def course_venv() -> Path:
    """The course's virtual environment (the one running this)."""
    return Path(sys.prefix)


#: What a copy of the course's Python installation leaves out: packages (the venv's are used), tests, build files.
_NOT_COPIED = ("site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3")


def copy_interpreter(base: Path, dest: Path) -> Path:
    """Copy the Python installation at ``base`` (``sys.base_prefix``) to ``dest``; return the copy's ``python``.

    The interpreter, ``libpython`` and the standard library (without its tests and build files); the
    interpreter's library search path (``RUNPATH``, absolute in a pyenv build) is rewritten to
    ``$ORIGIN/../lib``, so the copy finds its own ``libpython`` wherever it is, inside the grading sandbox too."""
    base, dest = Path(base), Path(dest)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    exe = dest / "bin" / version
    stamp = dest / ".copied-from"
    if exe.exists() and stamp.is_file() and stamp.read_text() == f"{base} {sys.version}":
        return exe
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "bin").mkdir(parents=True)
    data = (base / "bin" / version).read_bytes()
    old = f"{base}/lib".encode() + b"\0"
    if old in data:
        new = b"$ORIGIN/../lib\0"
        data = data.replace(old, new + b"\0" * (len(old) - len(new)))
    exe.write_bytes(data)
    exe.chmod(0o755)
    for name in ("python3", "python"):
        (dest / "bin" / name).symlink_to(version)
    (dest / "lib").mkdir()
    for lib in (base / "lib").glob("libpython*"):
        if lib.is_symlink():
            (dest / "lib" / lib.name).symlink_to(os.readlink(lib))
        elif lib.is_file():
            shutil.copy2(lib, dest / "lib" / lib.name)
    shutil.copytree(base / "lib" / version, dest / "lib" / version, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n in _NOT_COPIED or n.startswith("config-")])
    (dest / "lib" / version / "site-packages").mkdir()
    stamp.write_text(f"{base} {sys.version}")
    return exe


def user_python(state: Path, venv: Path | None = None) -> tuple[str, str]:
    """The interpreter and ``bin/`` folder the users' servers run.

    The course venv's own where every user can run it. Otherwise (a pyenv Python under ``/root``, as on the
    course's CI machines) ``state/python``: a copy of the same Python build (:func:`copy_interpreter`) whose
    ``site-packages`` imports the course venv's packages (a ``.pth`` running ``site.addsitedir``), with the
    venv's Jupyter data and configuration (symbolic links) and copies of its console scripts (``nbgrader``,
    ``jupyter``, ``alembic``, ...) that start this interpreter. Exactly the course's interpreter and
    packages, so nothing differs between what the instructor tested and what students run."""
    venv = Path(venv or course_venv())
    own = venv / "bin" / "python"
    base = Path(sys.base_prefix)
    stdlib = Path(os.__file__).parent
    if readable_by_others(Path(os.path.realpath(own)), execute=True) and readable_by_others(stdlib) \
            and readable_by_others(venv / "lib"):
        return str(own), str(venv / "bin")
    site_packages = next(p for p in map(Path, sys.path) if p.name == "site-packages" and venv in p.parents)
    if not readable_by_others(site_packages):
        raise SystemExit(f"the course's packages ({site_packages}) cannot be read by other users (a private course "
                         "folder?): give the students a venv they can read with --python (python3.11 -m venv "
                         "/opt/pytorch-internals; /opt/pytorch-internals/bin/pip install the student repository)")
    target = Path(state) / "python"
    py = copy_interpreter(base, target)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (target / "lib" / version / "site-packages" / "course-venv.pth").write_text(
        f"import site; site.addsitedir({str(site_packages)!r})\n")
    for sub in ("share/jupyter", "etc/jupyter"):
        link, real = target / sub, venv / sub
        link.parent.mkdir(parents=True, exist_ok=True)
        if real.exists() and not link.is_symlink():
            link.symlink_to(real)
    shebang = f"#!{venv}/bin/python".encode()
    for script in (venv / "bin").iterdir():
        if script.name.startswith(("python", "activate", "Activate")) or script.is_symlink() or not script.is_file():
            continue  # symbolic links: configurable-http-proxy, the hub's own
        data = script.read_bytes()
        if data.startswith(shebang):
            dest = target / "bin" / script.name
            dest.write_bytes(f"#!{py}\n".encode() + data.split(b"\n", 1)[1])
            dest.chmod(0o755)
    for d in [target, *target.rglob("*")]:
        if not d.is_symlink():
            d.chmod(d.stat().st_mode | (0o755 if d.is_dir() or os.access(d, os.X_OK) else 0o644))
    check = subprocess.run([str(py), "-c", "import site, course"], capture_output=True, text=True)
    if check.returncode != 0:
        raise SystemExit(f"the users' interpreter {py} does not run: {check.stderr.strip()[-800:]}")
    return str(py), str(target / "bin")


def find_proxy() -> str:
    """The ``configurable-http-proxy`` command: the course venv's (``make hub-system``), else the one on PATH."""
    own = course_venv() / "bin" / "configurable-http-proxy"
    found = str(own) if own.exists() else shutil.which("configurable-http-proxy")
    if not found:
        raise SystemExit("configurable-http-proxy is not installed: run `make hub-system` "
                         "(npm install -g --prefix .venv configurable-http-proxy)")
    return found


def ids(name: str) -> tuple[int, int]:
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


def prepare_exchange(exchange: Path, instructor: str, course_id: str = COURSE_ID) -> Path:
    """Create the exchange with nbgrader's modes, the course's folders owned by the instructor; return the root.

    Modes are set even on existing folders; files in them are left alone."""
    exchange = Path(exchange)
    exchange.mkdir(parents=True, exist_ok=True)
    for parent in exchange.parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            raise SystemExit(f"{parent} is not reachable by other users: the exchange must be (chmod o+x)")
    os.chown(exchange, 0, 0)
    os.chmod(exchange, 0o1777)
    uid, gid = ids(instructor)
    course = exchange / course_id
    for path, mode in ((course, 0o755), (course / "outbound", 0o755), (course / "inbound", 0o2733),
                       (course / "feedback", 0o711)):
        path.mkdir(exist_ok=True)
        os.chown(path, uid, gid)
        os.chmod(path, mode)
    return exchange


INSTRUCTOR_NBGRADER_CONFIG = '''"""nbgrader for the instructor's hub server (written by course.grading.hub): the course's own
configuration, with the hub's shared exchange."""
c = get_config()  # noqa: F821
load_subconfig({course_config!r})  # noqa: F821
c.CourseDirectory.root = {course!r}
c.Exchange.root = {exchange!r}
'''


def write_configs(s: HubSettings) -> None:
    """The users' Jupyter configuration folders (readable by them, written by root)."""
    from course import lab

    lab.write_student_config(s.student_config, s.exchange)
    inst = s.instructor_config
    inst.mkdir(parents=True, exist_ok=True)
    (inst / "nbgrader_config.py").write_text(INSTRUCTOR_NBGRADER_CONFIG.format(
        course_config=str(Path(s.course) / "nbgrader_config.py"), course=s.course, exchange=s.exchange))
    (inst / "labconfig").mkdir(exist_ok=True)
    (inst / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {lab.NEWS_PLUGIN: True}}, indent=1))
    # Formgrader's debug panel dumps the whole server configuration (not JSON): off, as in `make instructor`.
    (inst / "jupyter_server_config.json").write_text(json.dumps(
        {"FormgradeExtension": {"debug": False},
         "ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": True,
                                               "nbgrader.server_extensions.assignment_list": True,
                                               "nbgrader.server_extensions.course_list": False}}}, indent=1))
    for d in (s.student_config, inst):
        for p in [d, *d.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


HUB_CONFIG = '''"""JupyterHub for the PyTorch Internals class (written by course.grading.hub; settings in hub.json)."""
import json
from course.grading.hub import HubSettings, configure
configure(c, HubSettings(**json.load(open({settings!r}))))  # noqa: F821
'''


def user_env(s: HubSettings, name: str) -> dict[str, str]:
    """The environment of a user's server (and of the terminals in it)."""
    home = pwd.getpwnam(name).pw_dir
    config = s.instructor_config if name == s.instructor else s.student_config
    bindir = (s.instructor_bindir or s.bindir) if name == s.instructor else s.bindir
    env = {"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin", "HOME": home, "SHELL": "/bin/bash",
           "JUPYTER_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1", "LANG": "C.UTF-8",
           "COURSE_EXCHANGE": s.exchange, **s.extra_env}
    return env


def configure(c, s: HubSettings) -> None:
    """Fill JupyterHub's configuration object ``c`` (called by the generated ``jupyterhub_config.py``)."""
    c.JupyterHub.bind_url = f"http://{s.ip}:{s.port}"
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = s.hub_port
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{s.proxy_api_port}"
    c.ConfigurableHTTPProxy.command = [s.proxy]
    c.ConfigurableHTTPProxy.pid_file = str(s.private / "proxy.pid")
    c.JupyterHub.db_url = f"sqlite:///{s.private / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(s.private / "jupyterhub_cookie_secret")
    c.JupyterHub.pid_file = str(s.private / "jupyterhub.pid")
    c.JupyterHub.cleanup_servers = True
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.open_sessions = False  # no login records or session modules for a notebook server
    c.Authenticator.allowed_users = set(s.students) | {s.instructor}
    c.JupyterHub.spawner_class = "localprocess"
    c.Spawner.cmd = [s.python, "-m", "jupyterhub.singleuser"]
    c.Spawner.default_url = "/lab"
    c.Spawner.ip = "127.0.0.1"
    c.Spawner.start_timeout = 180
    c.Spawner.http_timeout = 180
    c.Spawner.env_keep = []

    def pre_spawn(spawner) -> None:
        name = spawner.user.name
        spawner.environment.update(user_env(s, name))
        spawner.notebook_dir = s.course if name == s.instructor else "~"
        if name == s.instructor and s.instructor_python:
            spawner.cmd = [s.instructor_python, "-m", "jupyterhub.singleuser"]

    c.Spawner.pre_spawn_hook = pre_spawn


def course_warnings(course: Path, instructor: str) -> list[str]:
    """What about the course folder would let students read the answers or break the instructor's commands."""
    out = []
    uid, _ = ids(instructor)
    if os.stat(course).st_uid != uid:
        out.append(f"{course} is not owned by {instructor}: nbgrader collect and grading write into it")
    for secret in ("source", "tests", "gradebook.db", ".judge", "submitted", "autograded", "feedback"):
        p = course / secret
        if p.exists() and readable_by_others(p):
            out.append(f"{p} is readable by every user (solutions, hidden tests, known answers or other "
                       f"students' work): chmod o-rwx {p}")
    return out


def prepare(s: HubSettings) -> Path:
    """Create the state, the exchange and the configurations; return the ``jupyterhub_config.py`` to run."""
    state = Path(s.state)
    if Path("/tmp") in state.resolve().parents:
        # The grading sandbox mounts a /tmp of its own: the users' venv would vanish inside it.
        raise SystemExit(f"--state {state}: not under /tmp (the grading sandbox has its own /tmp)")
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o755)
    s.private.mkdir(exist_ok=True)
    s.private.chmod(0o700)
    prepare_exchange(Path(s.exchange), s.instructor, s.course_id)
    if not s.python:
        s.python, s.bindir = user_python(state)
    s.proxy = s.proxy or find_proxy()
    s.hub_port = s.hub_port or free_port()
    s.proxy_api_port = s.proxy_api_port or free_port()
    write_configs(s)
    (s.private / "hub.json").write_text(json.dumps(asdict(s), indent=1))
    config = s.private / "jupyterhub_config.py"
    config.write_text(HUB_CONFIG.format(settings=str(s.private / "hub.json")))
    return config


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m course.grading hub",
                                description="JupyterHub for a class on one machine (run as root).")
    p.add_argument("--instructor", required=True, help="the instructor's Unix user name")
    p.add_argument("--students", required=True, help="the students' Unix user names, comma-separated")
    p.add_argument("--course", default=".", help="the course folder, owned by the instructor (default: here)")
    p.add_argument("--exchange", default=DEFAULT_EXCHANGE, help=f"nbgrader's exchange (default {DEFAULT_EXCHANGE})")
    p.add_argument("--state", default=DEFAULT_STATE, help=f"the hub's own files (default {DEFAULT_STATE})")
    p.add_argument("--ip", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--python", default="", help="the interpreter the students' servers run (default: the course "
                   "venv's where every user can run it, else a copy in STATE/python using the course venv's packages)")
    p.add_argument("--instructor-python", default="", help="the instructor's (default: the students'); e.g. the "
                   "course's own .venv/bin/python when the students get a venv of the student repository")
    p.add_argument("--prepare-only", action="store_true", help="write everything, print the command, do not start")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(list(sys.argv[1:] if argv is None else argv))
    if os.geteuid() != 0:
        print("the hub must run as root: it starts each user's server as that user", file=sys.stderr)
        return 2
    students = [n for n in (x.strip() for x in args.students.split(",")) if n]
    missing = []
    for name in [args.instructor, *students]:
        try:
            pwd.getpwnam(name)
        except KeyError:
            missing.append(name)
    if missing:
        print(f"no such Unix user: {', '.join(missing)} (create them: useradd -m NAME, then passwd NAME)",
              file=sys.stderr)
        return 2
    course = Path(args.course).resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(f"{course} is not the course folder (no nbgrader_config.py)", file=sys.stderr)
        return 2
    for warning in course_warnings(course, args.instructor):
        print(f"WARNING: {warning}", file=sys.stderr)
    s = HubSettings(course=str(course), instructor=args.instructor, students=students,
                    exchange=str(Path(args.exchange).resolve()), state=str(Path(args.state).resolve()),
                    ip=args.ip, port=args.port, python=args.python,
                    bindir=str(Path(args.python).parent) if args.python else "",
                    instructor_python=args.instructor_python,
                    instructor_bindir=str(Path(args.instructor_python).parent) if args.instructor_python else "")
    config = prepare(s)
    cmd = [sys.executable, "-m", "jupyterhub", "-f", str(config)]
    print(f"JupyterHub for {len(students)} student(s) and {args.instructor} at http://{args.ip}:{args.port}/ "
          f"(exchange {s.exchange}; Formgrader at /user/{args.instructor}/formgrader)", flush=True)
    if args.prepare_only:
        print(" ".join(cmd))
        return 0
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    os.chdir(s.private)
    os.execvpe(cmd[0], cmd, env)
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
