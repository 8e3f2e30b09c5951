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
