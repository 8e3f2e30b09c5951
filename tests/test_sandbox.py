"""course.grading.run.sandbox: what a submission's process can and cannot do (fast checks, no Jupyter kernel)."""
import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from course.grading.run import sandbox as sb

MECH = sb.detect()
needs_bwrap = pytest.mark.skipif(MECH.degraded, reason=f"no sandbox here: {MECH.why}")


def run_inside(tmp_path, code: str, limits: sb.Limits | None = None, course_root: Path | None = None,
               timeout: float = 60, visible=()) -> subprocess.CompletedProcess:
    work = tmp_path / "box" / "work"
    box = sb.Sandbox(workdir=work, ipcdir=tmp_path / "box" / "ipc", limits=limits or sb.Limits(),
                     course_root=course_root, visible=list(visible))
    box.prepare()
    box.enter_cgroup()
    cmd = box.wrap([sys.executable, "-c", textwrap.dedent(code)])
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, preexec_fn=box.preexec,
                              cwd=work, env={"PATH": "/usr/bin:/bin"})
    finally:
        box.cleanup()


def test_detect_says_what_it_found():
    assert MECH.kind in ("bwrap", "none")
    assert MECH.degraded == (MECH.kind != "bwrap")
    if MECH.degraded:
        assert MECH.why


@needs_bwrap
def test_only_the_submission_folder_is_writable_and_the_course_is_invisible(tmp_path):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "source" / "secret.txt").write_text("the answers")
    (course / "gradebook.db").write_text("grades")
    proc = run_inside(tmp_path, f"""
        import os
        print("uid", os.getuid())
        for p in ({str(course / 'source' / 'secret.txt')!r}, {str(course / 'gradebook.db')!r}, "/etc/shadow",
                  {str(Path.home() / '.bashrc')!r}):
            print(p, "visible" if os.path.exists(p) else "absent")
        open("mine.txt", "w").write("ok")
        for target in ("/usr/evil", {str(tmp_path / 'escape.txt')!r}, {str(course / 'x')!r}):
            try:
                open(target, "w").write("x"); print("wrote", target)
            except OSError as e:
                print("refused", target, type(e).__name__)
        print("env", sorted(k for k in os.environ if k.startswith("COURSE_SECRET")))
    """, course_root=course)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "secret.txt absent" in out and "gradebook.db absent" in out and "/etc/shadow absent" in out
    assert "wrote" not in out and out.count("refused") == 3
    # written into the sandbox's own capped working folder (a tmpfs over it), never onto the grader's disk
    assert not (tmp_path / "box" / "work" / "mine.txt").exists()
    assert not (tmp_path / "escape.txt").exists()
    if os.geteuid() == 0:
        assert "uid 0" not in out, "as root, the code inside must drop to an unprivileged uid"


@needs_bwrap
def test_the_instructors_environment_does_not_leak(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_SECRET_TOKEN", "abc")
    proc = run_inside(tmp_path, "import os; print(sorted(os.environ))")
    assert "COURSE_SECRET_TOKEN" not in proc.stdout and "NBGRADER" not in proc.stdout


@needs_bwrap
def test_no_network_not_even_to_the_hosts_loopback(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: accepted.append(srv.accept()), daemon=True).start()
    proc = run_inside(tmp_path, f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=3); print("connected")
        except OSError as e:
            print("refused", type(e).__name__)
    """)
    srv.close()
    assert "refused" in proc.stdout and not accepted


def test_memory_cap_refuses_a_huge_allocation(tmp_path):
    proc = run_inside(tmp_path, """
        try:
            b = bytearray(3 * 1024 ** 3); b[::4096] = b"x" * len(b[::4096]); print("allocated")
        except MemoryError:
            print("MemoryError")
    """, limits=sb.Limits(memory_bytes=1024 ** 3))
    assert "MemoryError" in proc.stdout or proc.returncode != 0
    assert "allocated" not in proc.stdout


def test_process_cap_stops_a_fork_bomb(tmp_path):
    proc = run_inside(tmp_path, """
        import os, time
        n = 0
        for _ in range(400):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(20); os._exit(0)
            n += 1
        print("forked", n, flush=True)
        os._exit(0)
    """, limits=sb.Limits(processes=32), timeout=60)
    forked = int(proc.stdout.split()[-1])
    assert forked < 40, f"the process cap did not hold: {forked} forks"


def test_watchdog_kills_a_tree_over_its_wall_time(tmp_path):
    import time
    p = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                          "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"],
                         start_new_session=True)
    ready = time.monotonic() + 30  # until the grandchild exists (a busy machine may take more than a second)
    while len(sb.descendants(p.pid)) < 2 and time.monotonic() < ready:
        time.sleep(0.1)
    dog = sb.Watchdog(p.pid, sb.Limits(), deadline=time.monotonic() + 0.5, interval=0.1)
    dog.start()
    p.wait(timeout=20)
    dog.join(timeout=5)
    assert dog.reason.startswith("wall time") and dog.peak_processes >= 2
    assert p.returncode is not None


GROWS_THEN_SHARES = """
import os, sys, time
blocks = []
for _ in range(6):                      # 6 x 50 MiB, touched, over about a second
    b = bytearray(50 * 2 ** 20); b[::4096] = b"x" * len(b[::4096]); blocks.append(b); time.sleep(0.2)
if os.fork() == 0:                      # a child sharing all 300 MiB (copy on write, never written)
    time.sleep(60); os._exit(0)
print("ready", flush=True); time.sleep(60)
"""


def test_the_watchdog_caps_and_reports_the_proportional_size_reading_it_only_when_needed():
    """Each poll reads the tree's resident size (cheap); the proportional size (smaps_rollup, 11 ms a read for a
    torch process) decides the cap and the peak. A parent and a child sharing 300 MiB hold 600 MiB resident but
    300 MiB proportional: a 450 MiB cap leaves them running and the peak says 300; a 200 MiB cap kills them."""
    import time
    for cap_mib, killed in ((450, False), (200, True)):
        p = subprocess.Popen([sys.executable, "-c", GROWS_THEN_SHARES], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            dog = sb.Watchdog(p.pid, sb.Limits(memory_bytes=cap_mib * 2 ** 20), deadline=time.monotonic() + 60,
                              interval=0.05)
            dog.start()
            if not killed:
                assert p.stdout.readline().strip() == "ready"
                time.sleep(1.0)
                procs = sb.descendants(p.pid)
                assert len(procs) == 2 and sum(sb.resident_bytes(q) for q in procs) > 560 * 2 ** 20
                assert dog.is_alive() and dog.reason == "" and p.poll() is None
                assert 290 * 2 ** 20 < dog.peak_rss < 450 * 2 ** 20, dog.peak_rss / 2 ** 20
            else:
                dog.join(timeout=30)
                assert dog.reason.startswith("memory cap exceeded"), dog.reason
                assert p.wait(timeout=10) == -9
        finally:
            dog.stop()
            sb.kill_tree(p.pid)
            p.wait(timeout=10)


def test_a_reused_pid_is_never_killed_as_the_kernel_it_once_was():
    """The grader kills a kernel's tree after nbgrader's kernel manager has reaped it, and its watchdog polls it
    while it runs. Once reaped, the kernel's PID (and its number as a process group) can go to any process on the
    machine: a classmate's run, the instructor's lab server. A tree is named by (pid, start time), so a process
    with the right PID but another start time is a stranger: no tree, no kill, no watchdog verdict."""
    import time
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        real = sb.start_time(stranger.pid)
        assert real is not None and sb.start_time(2 ** 22 + 7) is None
        assert sb.descendants(stranger.pid, real) == [stranger.pid]
        # what the grader recorded for the kernel that had this PID before: another start time
        sb.kill_tree(stranger.pid, real - 1)
        assert sb.descendants(stranger.pid, real - 1) == []
        # built for the kernel that had this PID before (the start time the grader read when that kernel started)
        dog = sb.Watchdog(stranger.pid, sb.Limits(), deadline=time.monotonic() - 1, interval=0.05, started=real - 1)
        assert sb.Watchdog(stranger.pid, sb.Limits(), deadline=0).started == real  # none given: read now
        dog.start()
        dog.join(timeout=5)
        assert not dog.is_alive() and dog.reason == "" and dog.peak_processes == 0
        time.sleep(0.3)
        assert stranger.poll() is None, "a process that only shares a dead kernel's PID was killed"
        sb.kill_tree(stranger.pid, real)  # the same process, named right: killed with its group
        assert stranger.wait(timeout=10) == -9
    finally:
        if stranger.poll() is None:
            stranger.kill()
            stranger.wait()


def test_inotify_reports_a_read_of_a_decoy(tmp_path):
    decoy = tmp_path / "gradebook.db"
    decoy.write_text("decoy")
    watch = sb.Inotify()
    watch.watch(decoy)
    if watch.fd < 0:
        pytest.skip("inotify unavailable")
    assert watch.hits() == []
    decoy.read_text()
    assert watch.hits() == [str(decoy)]
    watch.close()


def test_mountable_never_exposes_home_or_course(tmp_path):
    course = tmp_path / "course"
    (course / "course").mkdir(parents=True)
    (course / "course" / "__init__.py").write_text("")
    forbidden = [Path.home().resolve(), course.resolve()]
    assert not sb._mountable(course, forbidden, course)
    assert not sb._mountable(course / "source", forbidden, course)
    assert sb._mountable(course / "course", forbidden, course)
    assert not sb._mountable(Path("/"), forbidden, course)
    assert sb._mountable(Path("/usr/lib/python3"), forbidden, course)


def test_mounts_never_include_the_course_source_or_home(tmp_path):
    """What a submission's sandbox can see: never source/, the judge files, the gradebook or the home folder."""
    if MECH.degraded:
        pytest.skip("no sandbox here")
    from conftest import REPO
    box = sb.Sandbox(workdir=tmp_path / "w", ipcdir=tmp_path / "i", course_root=REPO)
    box.prepare()
    args = box.wrap(["true"])
    mounted = [Path(args[i + 1]) for i, a in enumerate(args) if a in ("--ro-bind", "--bind")]
    for m in mounted:
        m = m.resolve()
        assert m != REPO.resolve() and REPO.resolve() not in m.parents or m.name in ("course", ".venv") \
            or (REPO / ".venv").resolve() in m.parents, f"{m} exposes the course folder"
        assert m != Path.home().resolve(), "the home folder is mounted"
        assert not (m / "source").exists() and not list(m.glob("0*/judge.py")), f"{m} holds a chapter's judge file"
    package = next(m for m in mounted if m.name == "course" and (m / "checks.py").exists())
    assert not list(package.rglob("judge.py")), "a chapter's hidden tests (judge.py) never sit in the package"
    assert (package / "grading" / "judge" / "verdicts.py").is_file(), "the judge's machinery is in the package"


def test_degraded_mode_is_loud(tmp_path):
    """Without bubblewrap the grading command warns, every report is flagged, and --require-sandbox refuses."""
    env = dict(os.environ, COURSE_SANDBOX="none")
    code = "from course.grading.run import sandbox; m = sandbox.detect(); print(m.kind, '|', m.why)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.startswith("none | COURSE_SANDBOX=none")
    proc = subprocess.run([sys.executable, "-m", "course.grading", "autograde", "00_none", "--require-sandbox"],
                          env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "WARNING: grading WITHOUT a sandbox" in proc.stdout
    assert proc.returncode == 2 and "refusing to grade without a sandbox" in proc.stderr
    code = ("from course.grading.run.sandbox import Sandbox, Limits; from pathlib import Path; import sys; "
            f"b = Sandbox(workdir=Path({str(tmp_path / 'w')!r}), ipcdir=Path({str(tmp_path / 'i')!r})); "
            "print(b.describe()); print(b.wrap(['x'])[:2])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.startswith("degraded (no filesystem or network isolation)") and "'/usr/bin/env', '-i'" in out


@needs_bwrap
def test_dataloader_workers_pass_batches_from_a_deep_submission_folder(tmp_path):
    """DataLoader workers send shared tensors over AF_UNIX sockets in TMPDIR; a deep submission folder (long
    student names) must not push those paths past 107 bytes, where the batch is lost and the loader hangs."""
    deep = tmp_path / ("a-student-with-a-rather-long-name-" * 2) / "05_engineering_traps" / "more"
    proc = run_inside(deep, """
        import os, torch
        from torch.utils.data import DataLoader, Dataset
        class Images(Dataset):
            def __len__(self): return 8
            def __getitem__(self, i): return torch.full((3, 8, 8), float(i))
        batches = list(DataLoader(Images(), batch_size=4, num_workers=2, timeout=30))
        print("TMPDIR", os.environ["TMPDIR"], "batches", [b[:, 0, 0, 0].tolist() for b in batches])
    """, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "batches [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]" in proc.stdout
    assert len(str(deep)) > 110


@needs_bwrap
def test_a_submission_that_compiles_gets_the_machines_vector_isa_checks_and_compiles_none_of_them(tmp_path):
    """Inductor's checks of which vector instruction sets it can build for (about ten g++ runs before a first C++
    compile) are made once by the grader and copied into a submission's own compile cache: inside the sandbox,
    Inductor finds every answer there and builds or loads none of them again. (That grading seeds a submission
    whose probe compiles: tests/test_chapters.py, the report's sandbox line.)"""
    import platform
    import shutil

    from course.grading.run import scratch

    checks = scratch.vec_isa_checks()
    if platform.machine() not in ("x86_64", "AMD64") or not shutil.which("g++"):
        pytest.skip("the checks are made for an x86 CPU with g++")
    assert checks is not None and any(p.name.endswith(".so.load_ok") for p in Path(checks).rglob("*"))
    assert scratch.vec_isa_checks() == checks                 # made once: the second call finds them
    work = tmp_path / "box" / "work"
    work.mkdir(parents=True)
    assert scratch.seed_compile_cache(work / ".cache", checks)
    assert not scratch.seed_compile_cache(work / ".cache", checks)  # something there already: left alone
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    assert not scratch.seed_compile_cache(tmp_path / "link", checks)  # never through a link
    assert not list((tmp_path / "elsewhere").iterdir())
    proc = run_inside(tmp_path, """
        import os
        from pathlib import Path
        cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
        files = lambda: {str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file() and "locks" not in p.parts}
        before = files()
        from torch._inductor.cpu_vec_isa import valid_vec_isa_list
        isas = [str(isa) for isa in valid_vec_isa_list()]
        print("isas", isas)
        print("seeded", len(before), "made inside", sorted(files() - before))
    """, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # nothing built, nothing loaded again: no new program, library or load marker
    assert "made inside []" in proc.stdout and "isas []" not in proc.stdout, proc.stdout + proc.stderr[-2000:]


def test_the_vector_isa_check_dies_with_the_grading_process_that_started_it(tmp_path):
    """A grading process that its pool SIGKILLs (a stopped grade-class) runs no finally: the check it started must
    not run on as an orphan, writing into a private folder the grading command is removing."""
    import time

    grader = subprocess.Popen([sys.executable, "-c", "from course.grading.run import scratch; scratch.vec_isa_checks()"],
                              env={**os.environ, "TMPDIR": str(tmp_path)})

    def checks_of(parent: int) -> list[int]:
        found = []
        for d in Path("/proc").iterdir():
            try:
                argv = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"valid_vec_isa_list" in a for a in argv) and str(parent).encode() in argv:
                found.append(int(d.name))
        return found

    try:
        end = time.monotonic() + 60
        while not checks_of(grader.pid) and time.monotonic() < end and grader.poll() is None:
            time.sleep(0.05)
        assert checks_of(grader.pid), "the check never started"
        time.sleep(3)                      # well into it: importing torch, or compiling
        assert checks_of(grader.pid), "the check ended too soon to show anything"
        grader.kill()
        grader.wait()
        end = time.monotonic() + 3         # SIGKILL at once; an orphan would still have seconds of work left
        while checks_of(grader.pid) and time.monotonic() < end:
            time.sleep(0.05)
        assert not checks_of(grader.pid), "the check ran on after the grading process was killed"
    finally:
        if grader.poll() is None:
            grader.kill()
