"""Every hidden test gives the reference full marks for every seed, and a do-nothing answer scores 0 (issue 18, item 6).

``python -m course.grading sweep CHAPTER`` runs the reference notebook's code once, in one process, then every
probe twice per seed through the real wire format, and every verdict; then each do-nothing mutant
(``KIND = "do-nothing"``) in place of its solution, for 10 seeds: it must lose every grade cell it names.
No notebook is executed per seed, so 100 seeds cost seconds to a minute or two per chapter. The seeds are
drawn as grading draws them (a keyed hash per student).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import CHAPTERS, REPO
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.authoring import sweep


# The test run sweeps the first SEEDS of the sequence (the determinism check on the first TWICE); `make sweep` runs
# all 100 for every chapter (5 to 9 CPU-minutes per chapter on this machine: too much for a test run on two cores).
SEEDS, TWICE = 12, 3  # was 25, 5: CI on two cores ran 45 min and must stay under 40
# Probes that compile (Chapter 3's AOTInductor package: about 10 s a seed) run for the first TWICE seeds only here.


@pytest.mark.parametrize("chapter", [pytest.param(ch, marks=pytest.mark.xdist_group(f"sweep-{ch}")) for ch in CHAPTERS])
def test_the_reference_scores_full_marks_for_every_seed_and_do_nothing_scores_zero(chapter):
    proc = subprocess.run([sys.executable, "-m", "course.grading", "sweep", chapter, "--seeds", str(SEEDS),
                           "--twice-seeds", str(TWICE), "--donothing-seeds", str(TWICE),
                           "--costly-seeds", str(TWICE)], cwd=REPO,
                          env=nbgrader_io.env(), capture_output=True, text=True, timeout=1800)
    print(proc.stdout[-4000:])
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "0 problem(s)" in proc.stdout
    assert "do-nothing" in proc.stdout, "every exercise has a do-nothing mutant (tests/test_hygiene.py)"
    if chapter == "03_torchscript":  # its package probe compiles: the first TWICE seeds, twice each
        assert f"probes that compile ran for the first {TWICE} seeds only" in proc.stdout


def test_sweep_seeds_are_spread_and_repeatable():
    seeds = sweep.sweep_seeds(100)
    assert len(set(seeds)) == 100 and seeds == sweep.sweep_seeds(100)
    assert all(1 <= s < 2 ** 31 for s in seeds)


def test_the_sweep_catches_seed_luck_and_a_do_nothing_answer_that_passes(tmp_path):
    """On the toy chapter: a verdict that fails for some seeds, and a do-nothing mutant that a verdict lets pass."""
    import toycourse

    course = toycourse.make(tmp_path / "course")
    judge = course / "source" / toycourse.CHAPTER / "judge.py"
    judge.write_text(judge.read_text().replace(
        'C.check_equal(got["visible"], ref["visible"], "count_positive([-1, 2, 3])")',
        'C.check_equal(got["visible"], ref["visible"], "count_positive([-1, 2, 3])")\n'
        '    C.check_true(ref["cases"][0] != 0, "an unlucky seed: no positive element")'))
    d = course / "source" / toycourse.CHAPTER / "exercises"
    for cell in ("scale", "count_positive"):
        (d / cell / "mutants").mkdir(parents=True)
    (d / "scale" / "mutants" / "lazy_scale.py").write_text('"""Returns the input."""\nCELL = "scale"\nKIND = "do-nothing"\n'
                                     'FAILS = ["test_scale"]\nSOURCE = """\ndef scale(x, k):\n    return x\n"""\n')
    (d / "count_positive" / "mutants" / "lazy_count.py").write_text('"""Returns zero."""\nCELL = "count_positive"\nKIND = "do-nothing"\n'
                                     'FAILS = ["test_count_positive", "test_scale"]\nSOURCE = """\ndef count_positive(t):\n'
                                     '    return 2\n"""\n')
    code = ("import sys; from pathlib import Path; from course.grading.authoring import sweep; "
            f"r = sweep.run('{toycourse.CHAPTER}', Path({str(course)!r}), sweep.sweep_seeds(60), donothing_seeds=10); "
            "print('\\n'.join(r.problems)); print('DONOTHING', r.donothing)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=course, env=nbgrader_io.env(), capture_output=True,
                          text=True, timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "an unlucky seed" in out and "the reference loses test_count_positive" in out  # 3 elements > 0: ~1 in 8
    # a "do-nothing" answer that a grade cell lets through is reported (here FAILS claims test_scale, which a
    # wrong count_positive cannot lose); one that loses what it names is counted
    assert "the do-nothing answer lazy_count passes test_scale" in out
    assert "lazy_scale passes" not in out and "'lazy_scale': 10" in out


def test_each_sweep_process_compiles_into_a_cache_of_its_own(tmp_path):
    """The two halves of a chapter's variants run side by side at the same seed. Inductor's default cache is one
    folder per user, and AOTInductor packages a metadata file from it named after the generated code: a mutant
    that stores no contract once packaged the reference's (CI, stop 38). Each process gets its own cache, in
    its scratch folder, removed when it exits."""
    import toycourse

    course = toycourse.make(tmp_path / "course")
    code = ("import os, sys; from pathlib import Path; from course.grading.authoring import sweep; "
            f"sweep._prepare({toycourse.CHAPTER!r}, Path({str(course)!r}), 'cachetest'); "
            "print(os.environ['TORCHINDUCTOR_CACHE_DIR'], os.environ['TRITON_CACHE_DIR'], os.getcwd())")
    seen = []
    parent = tempfile.mkdtemp(prefix="pti-grader-")  # a grading command's private folder, handed to its children
    for env in (nbgrader_io.env(), dict(nbgrader_io.env(), TMPDIR=parent)):
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        inductor, triton, work = proc.stdout.split()[-3:]
        assert Path(inductor).parent == Path(triton).parent == Path(work) / ".cache", proc.stdout
        assert Path(work).parent.name.startswith("pti-grader-"), "not in the private temporary folder"
        assert env.get("TMPDIR") != parent or Path(work).parent == Path(parent), "a child keeps its parent's folder"
        assert not Path(work).exists(), f"{work} outlived its process"
        seen.append(inductor)
    assert seen[0] != seen[1]
    assert Path(parent).is_dir()  # the parent's folder is the parent's to remove
    shutil.rmtree(parent)


def test_the_variant_check_compiles_an_identical_source_once_and_anything_changed_again(tmp_path):
    """course.grading.authoring.compiles (the in-process variant check only): a repeated ``g++ -c`` of the same
    command on the same sources writes the first compile's object file back; a changed source, header beside it,
    flag or output path compiles again, and assembling (.S) and linking always run."""
    import shlex

    from course.grading.authoring import compiles

    calls = []

    def compiler(cmd_line, cwd):
        args = shlex.split(cmd_line)
        calls.append(cmd_line)
        out = Path(args[args.index("-o") + 1])
        inputs = [Path(a).read_bytes() for a in args if a.endswith((".cpp", ".S", ".o")) and a != str(out)]
        out.write_bytes(b"object of " + b"|".join(inputs) + f" {len(calls)}".encode())

    run = compiles.memoise(compiler)
    src, header, obj = tmp_path / "k.cpp", tmp_path / "k.h", tmp_path / "k.o"
    header.write_text("#define N 3\n")
    src.write_text('#include "k.h"\nint f() { return N; }\n')
    cmd = f"g++ {src} -O3 -c -o {obj}"
    run(cmd, str(tmp_path))
    first = obj.read_bytes()
    obj.unlink()                                   # Inductor removes the object files once it has linked them
    run(cmd, str(tmp_path))
    assert (len(calls), run.skipped, obj.read_bytes()) == (1, 1, first)
    with open(src, "a") as fh:                     # the commands Inductor appends once it has compiled a source
        fh.write(f"\n// Compile cmd\n// {cmd}\n// Link cmd\n// g++ {obj} -shared -o k.so\n")
    run(cmd, str(tmp_path))
    assert (len(calls), run.skipped) == (1, 2)
    for change in (lambda: src.write_text('#include "k.h"\nint f() { return N + 1; }\n'),
                   lambda: header.write_text("#define N 4\n")):
        n = len(calls)
        change()
        run(cmd, str(tmp_path))
        assert len(calls) == n + 1 and obj.read_bytes() != first and run.skipped == 2
    n = len(calls)
    run(cmd.replace("-O3", "-O1"), str(tmp_path))
    run(cmd.replace("k.o", "other.o"), str(tmp_path))
    assert len(calls) == n + 2
    weights = tmp_path / "w.S"
    weights.write_text(".incbin \"w.bin\"\n")
    link = f"g++ {obj} {tmp_path / 'w.o'} -shared -o {tmp_path / 'k.so'}"
    for _ in range(2):
        run(f"g++ {weights} -c -o {tmp_path / 'w.o'}", str(tmp_path))
        run(link, str(tmp_path))
    assert len(calls) == n + 6 and run.skipped == 2
    assert compiles.compile_key(["not", "a", "string"], None) is None   # a command it cannot read: compiled
    # Around this environment's torch compile command for the block only (absent in another torch: no change)
    from torch._inductor import cpp_builder
    before = cpp_builder._run_compile_cmd
    with compiles.reuse_identical_compiles() as memo:
        assert memo is cpp_builder._run_compile_cmd and memo.course_memoised
        with compiles.reuse_identical_compiles() as inner:
            assert inner is memo
    assert cpp_builder._run_compile_cmd is before


def test_the_instructors_checks_skip_only_dynamos_guard_timing():
    """The instructor's processes (sweep, variants, profiles) and the grading kernels' probes skip torch's timing of
    each new guard set: the guards are still built, checked on their own frame, and fail (a recompile) when an
    input changes."""
    code = """
import sys
import torch
from course.grading.run.guards import skip_guard_latency_profile
assert not skip_guard_latency_profile()     # a kernel that never imported Dynamo: nothing to skip ...
assert "torch._dynamo.guards" not in sys.modules  # ... and nothing imported for it
import torch._dynamo.guards as guards
real = guards.profile_guard_manager
assert skip_guard_latency_profile()
assert guards.profile_guard_manager is not real
torch._dynamo.reset()
seen = []
def backend(gm, example_inputs):
    seen.append(len(example_inputs))
    return gm.forward
f = torch.compile(lambda x: x * 2 + 1, backend=backend, dynamic=False)
assert torch.equal(f(torch.ones(3)), torch.full((3,), 3.0))
f(torch.ones(3))                                 # the guards pass: no new compile
f(torch.ones(3, dtype=torch.float64))            # the dtype guard fails: a recompile
print("COMPILES", len(seen))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=nbgrader_io.env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "COMPILES 2" in proc.stdout, proc.stdout
