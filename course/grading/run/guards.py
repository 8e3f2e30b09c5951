"""Dynamo's timing of each new set of guards, skipped in the grader's processes (:func:`skip_guard_latency_profile`).

Its own module, outside :mod:`course.grading.run.wire`, whose text keys the saved mutant profiles
(:func:`course.grading.judge.diagnosis.key`): this changes no verdict code.
"""
from __future__ import annotations


def skip_guard_latency_profile(load: bool = False) -> bool:
    """From now on in this process, Dynamo does not time each new set of guards: a number no probe or verdict reads.

    After each frame it compiles, torch 2.14 checks the frame's new guards once (a guard that fails on its own
    frame is still an error), then times one more check after evicting the CPU caches
    (``torch._C._dynamo.guards.profile_guard_manager``), for a number that goes only into a debug log and the
    compile metrics' ``guard_latency_us``. Measured here: 20 ms a compile on a quiet machine (334 compiles, 6.6 s
    of Chapter 6 run as a student runs it), 38 ms on a busy one. The probes of Chapter 6 compile hundreds of
    frames for each seed, and the reference run probes every student's seed.

    Called by the instructor's own processes (the sweep, the variant check: ``load=True`` imports Dynamo) and by
    each probe sent to a grading kernel once the notebook has run (``course.grading.run.worker``; only where the
    notebook already imported Dynamo): the notebook runs with torch as the student has it, and nothing a student
    runs outside grading changes. Returns whether the timing was there to skip."""
    import sys

    if load:
        try:
            import torch._dynamo.guards  # noqa: F401
        except ImportError:
            return False
    guards = sys.modules.get("torch._dynamo.guards")
    if guards is None or not callable(getattr(guards, "profile_guard_manager", None)):
        return False
    guards.profile_guard_manager = _no_guard_latency
    return True


def _no_guard_latency(*args, **kwargs) -> float:
    return 0.0
