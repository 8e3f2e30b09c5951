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
