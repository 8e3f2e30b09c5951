import io
import logging
import sys

from course.notebook import route_stderr_to_stdout


def test_route_stderr_to_stdout(monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    logger = logging.getLogger("course-test-route")
    handler = logging.StreamHandler(err)
    logger.addHandler(handler)
    monkeypatch.setattr("os.dup2", lambda a, b: None)  # leave pytest's real fd 2 alone
    try:
        assert route_stderr_to_stdout() is True
        print("warned", file=sys.stderr)
        logger.warning("logged")
        assert "warned" in out.getvalue() and "logged" in out.getvalue()
        assert err.getvalue() == ""
        assert route_stderr_to_stdout() is False, "a second call changes nothing"
    finally:
        logger.removeHandler(handler)


def test_scratch_folder_is_private_and_removed_when_the_process_stops(tmp_path):
    import os
    import stat
    import subprocess

    code = ("from course.notebook import scratch_folder; f = scratch_folder('course-test-'); "
            "(f / 'trace.json').write_text('{}'); print(f)")
    env = dict(os.environ, TMPDIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    folder = out.stdout.strip().splitlines()[-1]
    assert folder.startswith(str(tmp_path / "course-test-")), folder
    assert not os.path.exists(folder), "the folder outlived its process"
    from course.notebook import scratch_folder
    f = scratch_folder(str(tmp_path / "x-"))  # in this process: still there, private
    assert f.is_dir() and stat.S_IMODE(f.stat().st_mode) == 0o700
    # a forked child that exits normally runs the inherited clean-up, which leaves its parent's folder alone
    code = ("import os, sys; from course.notebook import scratch_folder; f = scratch_folder('course-test-'); "
            "pid = os.fork()\nif pid == 0: sys.exit(0)\nos.waitpid(pid, 0); print(f, f.is_dir())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split()[-1] == "True", out.stdout + out.stderr
    assert not os.path.exists(out.stdout.split()[0])


def _kernel_with_a_spawned_process_and_a_scratch_folder(tmp_path):
    """A kernel that made a scratch folder, started a process with spawn (macOS's and Windows' DataLoader workers)
    and holds a named semaphore, so that multiprocessing's resource tracker, which ignores SIGTERM, is its child."""
    import os

    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", env=dict(os.environ, TMPDIR=str(tmp_path)))
    code = ("import multiprocessing as mp\n"
            "from course.notebook import scratch_folder\n"
            "work = scratch_folder('course-test-')\n"
            "(work / 'model.pt').write_bytes(b'x' * 1000)\n"
            "p = mp.get_context('spawn').Process(target=print)\n"
            "p.start(); p.join()\n"
            "lock = mp.get_context('spawn').Lock()   # a named semaphore: the resource tracker runs\n"
            "print(work, p.exitcode)")
    out = []
    reply = kc.execute_interactive(code, timeout=120, output_hook=lambda m: out.append(m["content"].get("text", "")))
    assert reply["content"]["status"] == "ok", reply["content"]
    folder, exitcode = "".join(out).split()[-2:]
    assert exitcode == "0" and os.path.isdir(folder), out
    return km, kc, folder


def test_a_kernel_that_started_a_spawned_process_removes_its_scratch_folder_when_jupyter_shuts_it_down(tmp_path):
    """Shut Down (or Restart) in Jupyter: a shutdown request, then SIGTERM after half of shutdown_wait_time, then
    SIGKILL. ipykernel first waits for its children, and the resource tracker ignores SIGTERM, so the kernel usually
    meets Jupyter's SIGTERM, where no atexit handler runs; on a busy machine it may also finish first. Either way,
    the folder goes. The SIGTERM end is proven on its own, deterministically, by the next test."""
    import os

    km, kc, folder = _kernel_with_a_spawned_process_and_a_scratch_folder(tmp_path)
    try:
        process = km.provisioner.process
        km.shutdown_wait_time = 10             # SIGTERM after 5 s, SIGKILL (no clean-up at all) only after 10 s
        km.shutdown_kernel(now=False)          # what Jupyter's Shut Down does
        assert process.returncode in (0, -15), f"the kernel ended with {process.returncode}"
        assert not os.path.exists(folder), f"the kernel's scratch folder outlived it (ended with {process.returncode})"
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)


def test_a_kernel_sent_jupyters_sigterm_removes_its_scratch_folder_and_ends_as_sigterm_ends_it(tmp_path):
    """The SIGTERM that Jupyter sends a kernel still waiting for its children, sent at once: no atexit handler runs,
    the folder goes anyway, and the kernel still ends as SIGTERM ends it (so Jupyter sees what it expects)."""
    import os
    import signal

    km, kc, folder = _kernel_with_a_spawned_process_and_a_scratch_folder(tmp_path)
    try:
        process = km.provisioner.process
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == -signal.SIGTERM, f"the kernel ended with {process.returncode}"
        assert not os.path.exists(folder), "the kernel's scratch folder outlived it"
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)
        else:
            km.cleanup_resources()


def test_the_sigterm_clean_up_leaves_a_handler_someone_else_installed_alone(tmp_path):
    import os
    import subprocess

    code = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda s, f: (print('theirs', flush=True), sys.exit(3)))\n"
            "from course.notebook import scratch_folder\n"
            "f = scratch_folder('course-test-'); print(f, flush=True)\n"
            "os.kill(os.getpid(), signal.SIGTERM); time.sleep(5)")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, TMPDIR=str(tmp_path)),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3 and out.stdout.split()[-1] == "theirs", out.stdout + out.stderr
    assert not os.path.exists(out.stdout.split()[0]), "sys.exit ran the atexit clean-up"
    code = ("import os, signal, time\nfrom course.notebook import scratch_folder\n"
            "f = scratch_folder('course-test-'); print(f, flush=True)\nos.kill(os.getpid(), signal.SIGTERM); time.sleep(5)")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, TMPDIR=str(tmp_path)),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == -15 and not os.path.exists(out.stdout.split()[0]), out.stdout + out.stderr
