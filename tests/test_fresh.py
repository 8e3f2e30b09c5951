"""course.grading.run.fresh: the new process a probe loads a package file in (Chapter 3's package_for_serving)."""
from __future__ import annotations

import os

import torch

from course.grading.run import fresh


def test_each_call_is_a_new_process_forked_from_one_server_and_a_hang_is_killed(tmp_path):
    inputs = tmp_path / "inputs.pt"
    torch.save({"x": torch.ones(2)}, inputs)
    bogus = tmp_path / "not-a-package.pt2"
    bogus.write_bytes(b"an old file, not a package\n")
    code, why = fresh.run_package(str(bogus), str(inputs), str(tmp_path / "out1.pt"), timeout=120)
    assert code == 1 and why and "Error" in why, (code, why)     # the exception's last line comes back
    server = fresh._SERVER["proc"]
    code, why = fresh.run_package(str(tmp_path / "missing.pt2"), str(inputs), str(tmp_path / "out2.pt"), timeout=120)
    assert code == 1 and why, (code, why)
    assert fresh._SERVER["proc"] is server and server.poll() is None   # one server, still there for the next call
    assert not (tmp_path / "out1.pt").exists() and not (tmp_path / "out2.pt").exists()
    # A load that never ends (a FIFO nobody writes to): killed at the time limit, with the server; the next call
    # starts another server
    fifo = tmp_path / "hangs.pt2"
    os.mkfifo(fifo)
    code, why = fresh.run_package(str(fifo), str(inputs), str(tmp_path / "out3.pt"), timeout=5)
    assert code is None and "ran for over 5 s" in why, (code, why)
    assert server.poll() is not None and "proc" not in fresh._SERVER
    code, why = fresh.run_package(str(bogus), str(inputs), str(tmp_path / "out4.pt"), timeout=120)
    assert code == 1 and fresh._SERVER["proc"] is not server
    fresh._SERVER["proc"].stdin.close()                               # input closed: the server ends
    assert fresh._SERVER["proc"].wait(timeout=60) == 0


def test_two_answers_read_at_once_are_both_seen(tmp_path, monkeypatch):
    """A load that fails at once, read by a caller that was busy meanwhile: both answer lines wait in the pipe, and
    the call still returns the child's exit code at once (it once waited out its whole time limit)."""
    import time

    inputs = tmp_path / "inputs.pt"
    torch.save({"x": torch.ones(2)}, inputs)
    bogus = tmp_path / "not-a-package.pt2"
    bogus.write_bytes(b"an old file, not a package\n")
    assert fresh.run_package(str(bogus), str(inputs), str(tmp_path / "out1.pt"), timeout=120)[0] == 1  # warm
    proc = fresh._SERVER["proc"]
    flush = proc.stdin.flush

    def late_reader():
        flush()
        time.sleep(2)  # the child has failed and the server has answered twice before the caller reads

    monkeypatch.setattr(proc.stdin, "flush", late_reader)
    code, why = fresh.run_package(str(tmp_path / "missing.pt2"), str(inputs), str(tmp_path / "out2.pt"), timeout=20)
    # The child's own exit code and error line: a call that waited for an answer already read ends at its time
    # limit with (None, "ran for over 20 s") instead. No wall-clock bound: a busy machine may be slow to fork.
    assert code == 1 and why and "ran for over" not in why, (code, why)
    assert fresh._SERVER["proc"] is proc and proc.poll() is None
