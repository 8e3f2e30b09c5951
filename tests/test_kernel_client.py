"""The kernel client every notebook run uses waits on a channel in short slices (course.grading.run.worker.Client)."""
from __future__ import annotations

import asyncio
import time
from queue import Empty

from course.grading.run import worker


class _MissesItsWakeup:
    """A channel like pyzmq's after a missed edge: a message that arrives while it waits is seen only at the
    poll's final check, when the timeout runs out."""

    def __init__(self, arrives_after: float | None) -> None:
        self.arrives = None if arrives_after is None else time.monotonic() + arrives_after
        self.calls: list[float | None] = []

    def is_alive(self) -> bool:
        return True

    async def get_msg(self, timeout=None):
        self.calls.append(timeout)
        if self.arrives is not None and time.monotonic() >= self.arrives:
            return {"msg": "reply"}
        await asyncio.sleep(timeout if timeout is not None else 3600)
        if self.arrives is not None and time.monotonic() >= self.arrives:
            return {"msg": "reply"}
        raise Empty


def test_a_missed_wakeup_costs_one_slice_not_the_whole_timeout(monkeypatch):
    monkeypatch.setattr(worker, "POLL_SLICE", 0.1)
    bare = _MissesItsWakeup(arrives_after=0.2)
    t0 = time.monotonic()
    assert asyncio.run(bare.get_msg(timeout=2.0)) == {"msg": "reply"}
    assert time.monotonic() - t0 >= 1.9  # what nbclient saw: the reply only at the cell's timeout

    sliced = worker._SlicedChannel(_MissesItsWakeup(arrives_after=0.2))
    assert asyncio.run(sliced.get_msg(timeout=2.0)) == {"msg": "reply"}
    # it waited slices of 0.1 s until the reply (0.2 s in): a handful, not the 20 the timeout holds (counted, not
    # timed: a busy machine that stalls this process makes fewer slices, never more)
    assert len(sliced._channel.calls) <= 10 and max(sliced._channel.calls) <= 0.1
    assert sliced.is_alive()  # everything else is the channel's own


def test_the_deadline_and_no_timeout_keep_their_meaning(monkeypatch):
    monkeypatch.setattr(worker, "POLL_SLICE", 0.05)
    never = worker._SlicedChannel(_MissesItsWakeup(arrives_after=None))
    t0 = time.monotonic()
    try:
        asyncio.run(never.get_msg(timeout=0.3))
        raise AssertionError("no message, yet get_msg returned")
    except Empty:
        pass
    assert 0.25 <= time.monotonic() - t0 and len(never._channel.calls) <= 8  # 0.3 s of 0.05 s slices, not more
    later = worker._SlicedChannel(_MissesItsWakeup(arrives_after=0.3))
    assert asyncio.run(later.get_msg(timeout=None)) == {"msg": "reply"}  # waits on, a slice at a time
    assert all(c is not None and c <= 0.05 for c in later._channel.calls)


def test_every_kernel_the_project_starts_gets_sliced_channels(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    client = worker.Client(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    seen = []
    client.on_cell_start = lambda cell, cell_index: seen.append(
        (type(client.kc._shell_channel), type(client.kc._iopub_channel)))
    client.execute()
    assert nb.cells[0].outputs[0]["text"] == "42\n"
    assert seen == [(worker._SlicedChannel, worker._SlicedChannel)]
    assert issubclass(worker.CappedClient, worker.Client)


def test_the_synchronous_setup_wraps_the_channels_too(tmp_path):
    import nbformat

    client = worker.Client(nbformat.v4.new_notebook(), timeout=60, kernel_name="python3",
                           resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        assert isinstance(client.kc._shell_channel, worker._SlicedChannel)
        assert isinstance(client.kc._iopub_channel, worker._SlicedChannel)
