"""course.timing: interleaved rounds, spreads and verdicts (fake clocks), and a run beside a CPU hog.

The hog test asserts that every verdict the chapters' timing helpers print follows from the numbers printed
beside it, whatever the load did to those numbers. It asserts consistency, never speed, so it cannot flake
on a slow or busy machine.
"""
import os
import re
import subprocess
import sys
import time

import pytest
import torch

from course import deploy, eager, timing


class FakeClock:
    """A clock that advances by the next of ``steps`` each time it is read (seconds)."""

    def __init__(self, steps):
        self.t, self.steps = 0.0, iter(steps)

    def __call__(self):
        self.t += next(self.steps)
        return self.t


def test_interleaved_runs_round_robin_and_returns_per_call_seconds():
    order = []
    fns = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    # each sample reads the clock twice: the start (+0) and the end (+elapsed)
    clock = FakeClock([0, 0.002, 0, 0.004] * 3)
    out = timing.interleaved(fns, rounds=3, warmup=1, number=2, clock=clock, threads=None)
    assert order == ["a", "b"] + ["a", "a", "b", "b"] * 3     # one warm-up round, then rounds of 2 calls each
    assert out == {"a": pytest.approx([0.001] * 3), "b": pytest.approx([0.002] * 3)}


def test_interleaved_calibrates_per_variant_and_syncs():
    synced = []
    # calibrate reads 2 clock values per block: "a" needs 1 block (2 ms >= 1 ms); "b" takes 0.3 ms a call, so
    # blocks of 1, 2, 4 calls (0.3, 0.6, 1.2 ms): 4 calls per sample
    clock = FakeClock([0, 0.002, 0, 0.0003, 0, 0.0006, 0, 0.0012] + [0, 0.001] * 4)
    out = timing.interleaved({"a": lambda: None, "b": lambda: None}, rounds=2, warmup=0, number=None,
                             target_s=1e-3, sync=lambda: synced.append(1), clock=clock, threads=None)
    assert len(out["a"]) == len(out["b"]) == 2
    assert out["a"] == pytest.approx([0.001, 0.001])          # number 1 for a
    assert out["b"] == pytest.approx([0.001 / 4] * 2)         # 0.3 ms per 2 calls -> 4 calls make 1 ms+
    assert len(synced) == 2 * 2 * 2                             # before and after every sample


def test_interleaved_sets_and_restores_threads():
    before = torch.get_num_threads()
    seen = []
    timing.interleaved({"a": lambda: seen.append(torch.get_num_threads())}, rounds=1, warmup=0, threads=1)
    assert seen == [1] and torch.get_num_threads() == before
    with pytest.raises(ValueError):
        timing.interleaved({"a": lambda: None}, rounds=0)
    with pytest.raises(ValueError):
        timing.interleaved({"a": lambda: None}, rounds=1, number=0)


def test_calibrate():
    assert timing.calibrate(lambda: None, 1e-3, clock=FakeClock([0, 0.005])) == 1
    # 1 call: 0.1 ms; 2 calls: 0.2; 4: 0.4; 8: 0.8; 16: 1.6 ms -> 0.1 ms per call -> 10 calls
    assert timing.calibrate(lambda: None, 1e-3, clock=FakeClock([0, 1e-4, 0, 2e-4, 0, 4e-4, 0, 8e-4, 0, 1.6e-3])) == 10


def test_spread_and_paired_ratio_moved_from_deploy():
    assert deploy.spread is timing.spread and deploy.paired_ratio is timing.paired_ratio
    sp = timing.spread([4.0, 1.0, 3.0, 2.0, 5.0])
    assert sp == {"median": 3.0, "q1": 2.0, "q3": 4.0, "min": 1.0, "max": 5.0, "n": 5}
    with pytest.raises(ValueError):
        timing.spread([])
    assert timing.paired_ratio([2.0, 4.0, 9.0], [1.0, 2.0, 3.0])["median"] == 2.0


@pytest.mark.parametrize("a, b, want", [
    ([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], "faster"),
    ([2.0, 2.1, 2.2], [1.0, 1.1, 1.2], "slower"),
    ([1.0, 2.0, 3.0], [2.0, 2.1, 2.2], "inconclusive"),       # b's middle half inside a's
    ([1.0, 1.5, 2.0], [1.5, 2.0, 2.5], "inconclusive"),       # touching middle halves are not "separate"
    ([1.0] * 5, [1.0] * 5, "inconclusive"),
])
def test_verdict_needs_separate_middle_halves(a, b, want):
    assert timing.verdict(a, b) == want
    assert timing.verdict(timing.spread(a), timing.spread(b)) == want
    flipped = {"faster": "slower", "slower": "faster", "inconclusive": "inconclusive"}[want]
    assert timing.verdict(b, a) == flipped


def test_verdict_ignores_a_few_outliers_but_not_a_shift():
    quiet = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    loaded = [1.2, 1.21, 1.19, 1.2, 5.0, 1.22, 1.18, 1.2]   # one round hit by load
    assert timing.verdict(quiet, loaded) == "faster"
    assert timing.verdict(quiet, [q + 0.005 for q in quiet]) == "inconclusive"


def test_comparison_line_and_its_parser():
    line = timing.comparison("frozen", [1e-3, 1.1e-3, 1.2e-3], "eager", [2e-3, 2.1e-3, 2.2e-3], unit="ms", scale=1e3)
    assert line.startswith("frozen 1.100 [1.050, 1.150] ms vs eager 2.100 [2.050, 2.150] ms: frozen is faster")
    assert timing.parse_intervals(line) == [(1.1, 1.05, 1.15), (2.1, 2.05, 2.15)]
    assert timing.consistent(line)
    unsure = timing.comparison("a", [1, 2, 3], "b", [2.0, 2.5, 3.0], unit="s", scale=1)
    assert timing.INCONCLUSIVE in unsure and timing.consistent(unsure)
    # a verdict that contradicts its own numbers is caught
    assert not timing.consistent(line.replace("is faster", "is slower"))
    assert not timing.consistent(unsure.replace(timing.INCONCLUSIVE, "a is faster"))
    assert not timing.consistent("no numbers here")


def test_compare_ms_is_interleaved_on_the_shared_helper(monkeypatch):
    clock = FakeClock([0, 0.001, 0, 0.003] * 4)
    monkeypatch.setattr(timing.time, "perf_counter", clock)
    out = deploy.compare_ms({"a": lambda: None, "b": lambda: None}, repeats=4, warmup=0)
    assert out["a"]["samples"] == pytest.approx([1.0] * 4) and out["b"]["median"] == pytest.approx(3.0)
    assert timing.verdict(out["a"], out["b"]) == "faster"


# --- beside a CPU hog -------------------------------------------------------------------------------------

_NUMBER = r"(-?\d+(?:\.\d+)?)"


def _check_ladder(lines):
    """Each ladder line's layer verdict against its own printed range and the printed range of the line above."""
    found = [timing.parse_intervals(line) for line in lines]
    assert all(len(f) == 1 for f in found), lines
    for prev, here, line in zip(found, found[1:], lines[1:]):
        (_, p1, p3), (_, h1, h3) = prev[0], here[0]
        cost = re.search(r"this layer: costs " + _NUMBER + " us", line)
        cheaper = re.search(r"cheaper than the row above by " + _NUMBER + " us", line)
        if cost:
            assert p3 <= h1 and float(cost.group(1)) > 0, line
        elif cheaper:
            assert h3 <= p1 and float(cheaper.group(1)) > 0, line
        else:
            assert eager.BELOW_NOISE in line and h3 >= p1 and p3 >= h1, line


@pytest.fixture
def cpu_hog():
    """One busy-looping process per core for the duration of the test, killed (by pid) afterwards."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.2)
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=10)


@pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:FutureWarning")
def test_printed_verdicts_follow_their_own_numbers_beside_a_cpu_hog(cpu_hog):
    start = time.perf_counter()
    assert all(p.poll() is None for p in cpu_hog), "the hog is running"
    printed = []
    # Chapter 1, "Zoom into one op": one measurement feeds the ladder and the four-ways table
    costs = eager.op_costs(rounds=6, target_s=2e-4)
    ladder = eager.ladder_lines(costs)
    table = eager.mode_table_lines(costs)
    _check_ladder(ladder)
    # the ladder's no_grad and requires_grad rungs print the same ranges as the table's mul entries
    mul_row = timing.parse_intervals(table[2])
    assert timing.parse_intervals(ladder[3])[0] == mul_row[list(eager.MODES).index("no_grad")]
    assert timing.parse_intervals(ladder[4])[0] == mul_row[list(eager.MODES).index("requires_grad")]
    printed += [line for line in table if line.startswith("recording")]
    # Chapter 1 size sweep: fresh output vs preallocated out=
    eager.size_sweep([1, 10_000], rounds=4, target_s=2e-4)
    printed += eager.fresh_memory_lines(eager.fresh_vs_preallocated(300_000, rounds=6), 300_000)[:1]
    # Chapter 3, the freeze cell: interleaved eager / script / script + freeze of a small conv net
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
    x = torch.randn(2, 3, 16, 16)
    frozen = torch.jit.freeze(torch.jit.script(net))
    with torch.no_grad(), deploy.num_threads(1):
        runs = deploy.compare_ms({"eager": lambda: net(x), "script + freeze": lambda: frozen(x)}, repeats=8, warmup=2)
    printed.append(timing.comparison("script + freeze", runs["script + freeze"], "eager", runs["eager"],
                                     unit="ms", scale=1.0))
    bound = deploy.fold_bound_lines(runs["eager"]["samples"], runs["script + freeze"]["samples"], 0.03)
    for line in printed:
        assert timing.consistent(line), line
    _check_bound(bound)
    assert all(p.poll() is None for p in cpu_hog), "the hog ran throughout"
    assert time.perf_counter() - start < 20


def _check_bound(lines):
    text = " ".join(lines)
    (_, r1, r3), = timing.parse_intervals(lines[0])
    most = float(re.search(r"at most " + _NUMBER + "x", text).group(1))
    if "more than removing" in text:
        assert r1 >= most, text     # printed to 2 digits: r1 > most before rounding
    elif "within what removing" in text:
        assert r1 <= most and timing.INCONCLUSIVE not in text, text
    else:
        assert timing.INCONCLUSIVE in text or "slower" in text, text


def test_fold_bound_lines_cases():
    fast = [2.0, 2.1, 2.0, 1.9]
    _check_bound(deploy.fold_bound_lines(fast, [1.0, 1.0, 1.0, 1.0], 0.03))            # 2x with 3% bn: beyond
    assert "more than removing" in " ".join(deploy.fold_bound_lines(fast, [1.0] * 4, 0.03))
    within = deploy.fold_bound_lines([1.02, 1.03, 1.02, 1.03], [1.0] * 4, 0.10)
    assert "within what removing" in " ".join(within)
    _check_bound(within)
    same = deploy.fold_bound_lines([1.0, 1.2, 0.9, 1.1], [1.1, 0.9, 1.0, 1.2], 0.03)
    assert timing.INCONCLUSIVE in " ".join(same)
    _check_bound(same)
