"""tests/test_ddp.py in a fresh Python process of its own.

course.ddp no longer forks (it starts ranks with forkserver or spawn, so a backward in the parent is harmless, and
test_ddp.py checks that). The tests still run apart: their launches start a forkserver and spawned interpreters,
which stay out of the long-lived pytest workers.
"""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO


def test_the_ddp_helpers_in_a_process_of_their_own():
    env = dict(os.environ, COURSE_DDP_PROCESS="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-rs", "tests/test_ddp.py"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    print(proc.stdout[-6000:])
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout
