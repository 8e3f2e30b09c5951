"""The seed sweep: every hidden test, on the reference solution, for many seeds, in one process, without nbgrader.

``python -m course.grading sweep CHAPTER [--seeds 100]`` proves two promises
of the hidden tests without paying for a notebook run per seed:

* **The reference gets full marks for every seed.** The reference notebook's
  setup, locked and solution cells run once, in this process (the reference
  is trusted code), with ``NBGRADER_EXECUTION=autograde`` as when grading.
  Then, for each seed, every probe runs twice on that namespace, through the
  same wire format as a real grading (encode, ``torch.save``, the capped
  ``weights_only`` load): the first result is the reference, the second plays
  the student. Each verdict must pass. A hidden test that depends on the
  luck of the seed (an accuracy threshold that the reference misses on a few
  data sets), on state left by earlier calls, or on nondeterminism, fails here.
* **A do-nothing answer scores 0.** Every mutant marked ``KIND = "do-nothing"``
  (an empty list, the identity, zero, ``pass``, the input returned) replaces
  its solution in a copy of the namespace, and every grade cell of its
  ``FAILS`` must fail for every seed tried.

The seeds are drawn the way grading draws them (a keyed hash per student),
so they cover the whole range a course installation can produce.
"""
from __future__ import annotations

import atexit
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import paths, records
from course.grading.run import wire
from course.grading.run.guards import skip_guard_latency_profile
from course.grading.run.scratch import compile_caches, private_tmpdir
from course.grading.judge.verdicts import decide, load


@dataclass
class SweepReport:
    """What a sweep found: ``problems`` (empty: every promise held), and seconds per probe call."""

    chapter: str
    seeds: list[int]
    problems: list[str] = field(default_factory=list)
    timings: dict[str, list[float]] = field(default_factory=dict)
    setup_seconds: float = 0.0
    donothing: dict[str, int] = field(default_factory=dict)  # mutant -> grade cells x seeds it failed
    skipped_costly: int = 0  # probe runs left out by ``costly_seeds``
    reused_compiles: int = 0  # identical C++ compiles not run again (course.grading.authoring.compiles)

    def table(self) -> str:
        lines = [f"{'hidden test':<44}{'median':>10}{'max':>10}  (seconds per probe call)"]
        for test, ts in self.timings.items():
            lines.append(f"{test:<44}{statistics.median(ts):>10.3f}{max(ts):>10.3f}")
        total = sum(sum(ts) for ts in self.timings.values())
        lines.append(f"setup {self.setup_seconds:.1f} s; {len(self.seeds)} seeds; probe time {total:.1f} s")
        return "\n".join(lines)


def sweep_seeds(n: int, key: bytes = b"sweep") -> list[int]:
    """``n`` grading seeds drawn as a course installation draws them, one per (imaginary) student."""
    from course.grading.judge.references import student_seed

    return [student_seed(key, "sweep", f"student-{i}") for i in range(n)]


def _prepare(chapter: str, root: Path, prefix: str):
    """The grading environment in this process: the judge, a scratch folder holding the chapter's data files (as
    the working directory), and an IPython shell that shows no tracebacks and needs no event loop."""
    from IPython.core.interactiveshell import InteractiveShell

    from course.grading.judge.references import source_notebook

    judge = load(chapter, root)
    os.environ["NBGRADER_EXECUTION"] = "autograde"
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # The scratch folder, in this process's private temporary folder (removed at exit), with compile caches of its
    # own, as each sandboxed submission has (see course.grading.run.scratch.compile_caches: the two halves of a
    # chapter's variants, run side by side at the same seed, once packaged each other's AOTInductor metadata).
    work = Path(tempfile.mkdtemp(prefix=f"{prefix}-{chapter}-", dir=private_tmpdir()))
    os.environ.update(compile_caches(work / ".cache"))
    # Removed when this process exits, also where the private folder is a parent's (a grading command's child
    # keeps the folder it was handed, which its parent removes when it exits).
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    for item in source_notebook(chapter, root).parent.iterdir():
        if item.is_file() and item.suffix != ".ipynb" and item.name != "judge.py":
            (work / item.name).write_bytes(item.read_bytes())
    os.chdir(work)
    skip_guard_latency_profile(load=True)  # a metric nothing here reads: 40 % of a Chapter 6 sweep
    shell = InteractiveShell.instance()
    shell.enable_gui = lambda gui=None: None  # `%matplotlib inline` needs no event loop here
    shell.showtraceback = lambda *a, **k: None  # errors are reported by the caller, once
    # No output cache (the cells run silent, so it would stay empty): with it, every reset between two variants
    # flushes it with a full gc.collect(), about 0.9 s of a heap holding torch, transformers and compiled graphs.
    shell.displayhook.do_full_cache = False
    return judge, shell


def _one(probe_code, seed: int, namespace: dict) -> tuple[dict, float]:
    t0 = time.perf_counter()
    rec = wire.probe_record(probe_code.source, probe_code.name, seed, namespace=namespace)
    elapsed = time.perf_counter() - t0
    try:
        out = wire.loads(wire.dumps(rec))
        if not out.get("ok"):  # the reference (or our own mutant) in this process: the whole message
            out["error"], out["where"] = wire.raw_failure_text(out)
        return out, elapsed
    except ValueError as err:
        return {"ok": False, "error": str(err)}, elapsed


def run(chapter: str, root: Path, seeds: list[int], donothing_seeds: int = 10, twice: bool | int = True,
        log=print, costly_seeds: int | None = None) -> SweepReport:
    """Sweep ``chapter`` (see the module docstring); return the report. Runs the notebook's code in this process.

    ``costly_seeds``: probes with a time limit of their own (``judge.probe(..., seconds=)``, a probe that compiles)
    run for the first N seeds only (default: all); the test run uses it, ``make sweep`` does not.

    g++ runs once for each distinct C++ source (:mod:`course.grading.authoring.compiles`, as ccache does): a
    package probe generates the same program for every seed (the seed changes the weights, which are assembled and
    linked every time), and its second run, the determinism check, compiles what the first did. Everything else in
    a probe runs every time; ``report.reused_compiles`` counts the compiles not run again."""
    from course.grading.authoring.compiles import reuse_identical_compiles

    with reuse_identical_compiles() as memo:
        report = _run(chapter, root, seeds, donothing_seeds, twice, log, costly_seeds)
    report.reused_compiles = memo.skipped if memo is not None else 0
    return report


def _run(chapter: str, root: Path, seeds: list[int], donothing_seeds: int, twice: bool | int, log,
         costly_seeds: int | None) -> SweepReport:
    from course.grading.judge.answers import load_variants
    from course.grading.judge.references import reference_cells, reference_notebook

    root = Path(root).resolve()
    report = SweepReport(chapter=chapter, seeds=list(seeds))
    judge, shell = _prepare(chapter, root, "sweep")
    t0 = time.perf_counter()
    for index, _cell_id, source in reference_cells(reference_notebook(chapter, root)):
        result = shell.run_cell(source, store_history=False, silent=True)
        err = result.error_before_exec or result.error_in_exec
        if err is not None:
            report.problems.append(f"reference cell {index} failed: {type(err).__name__}: {err}")
            return report
    report.setup_seconds = time.perf_counter() - t0
    namespace = shell.user_ns
    codes = judge.codes()
    twice_seeds = len(seeds) if twice is True else int(twice)  # the determinism check: the first seeds only
    for n, seed in enumerate(seeds, 1):
        for code in codes:
            if code.seconds and costly_seeds is not None and n > costly_seeds:
                report.skipped_costly += 1
                continue
            ref, dt = _one(code, seed, namespace)
            report.timings.setdefault(code.test, []).append(dt)
            if not ref.get("ok"):
                report.problems.append(f"seed {seed}: the reference fails the probe of {code.test}: "
                                       f"{ref.get('error')} {ref.get('where', '')}".strip())
                continue
            got = ref
            if n <= twice_seeds:
                got, dt = _one(code, seed, namespace)
                report.timings[code.test].append(dt)
            try:
                v = decide(judge.probes[code.test], got, ref)
            except Exception as err:  # noqa: BLE001 - a JudgeError or a verdict bug: report it with the seed
                report.problems.append(f"seed {seed}: {code.test}: {type(err).__name__}: {err}")
                continue
            if not v.passed:
                report.problems.append(f"seed {seed}: the reference loses {code.test}"
                                       f"{' (a second run disagrees with the first)' if n <= twice_seeds else ''}: "
                                       f"{v.message.splitlines()[0][:300]}")
        if n % 10 == 0:
            log(f"  {chapter}: {n}/{len(seeds)} seeds, {len(report.problems)} problem(s)")
    # Do-nothing answers: each must lose every grade cell it names, for every seed tried.
    refs_by_seed: dict[tuple[int, str], dict] = {}
    for variant in [v for v in load_variants(chapter, "mutant", root) if v.klass == "do-nothing"]:
        ns = dict(namespace)
        try:
            exec(compile(variant.source, f"<mutant {variant.name}>", "exec"), ns)  # noqa: S102 - our own mutant
        except Exception as err:  # noqa: BLE001
            report.problems.append(f"do-nothing mutant {variant.name} does not even run: {type(err).__name__}: {err}")
            continue
        failed = 0
        for seed in seeds[:donothing_seeds]:
            for test in variant.fails:
                code = judge.code(test)
                if (seed, test) not in refs_by_seed:
                    refs_by_seed[(seed, test)] = _one(code, seed, namespace)[0]
                got, _ = _one(code, seed, ns)
                v = decide(judge.probes[test], got, refs_by_seed[(seed, test)])
                if v.passed:
                    report.problems.append(f"seed {seed}: the do-nothing answer {variant.name} passes {test}")
                else:
                    failed += 1
        report.donothing[variant.name] = failed
    return report


@dataclass
class VariantReport:
    """What :func:`variants` found: ``problems`` (empty: every mutant lost exactly its cells, every alternative
    kept them all), and per variant the grade cells it lost."""

    chapter: str
    seeds: list[int]
    problems: list[str] = field(default_factory=list)
    lost: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    #: per variant, per seed: {grade cell: the failing check's code} (see course.grading.judge.diagnosis)
    profiles: dict[str, list[dict[str, str]]] = field(default_factory=dict)


def _fresh_namespace(shell, cells, replace: dict[str, str]) -> tuple[dict, list[str]]:
    """Run the reference's setup and solution cells in a clean namespace, ``replace`` {grade_id: source} swapped in.
    A cell that raises does not stop the others (nbgrader executes with errors allowed): its error is returned."""
    shell.reset(new_session=False)
    errors = []
    for index, cell_id, source in cells:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            result = shell.run_cell(replace.get(cell_id, source), store_history=False, silent=True)
        err = result.error_before_exec or result.error_in_exec
        if err is not None:
            errors.append(f"cell {cell_id or index}: {type(err).__name__}: {str(err)[:200]}")
    return shell.user_ns, errors


def variants(chapter: str, root: Path, seeds: list[int], names: list[str] | None = None, log=print,
             extra: list | None = None, all_tests: bool = False) -> VariantReport:
    """Every mutant and alternative of ``chapter`` through the judge's probes and verdicts, in this process.

    For each variant, the reference notebook's setup and solution cells run again in a clean namespace with the
    variant's cell in place of the reference's (so an exercise that calls another one sees the variant, as in a
    notebook), then the probes of the variant's exercise (and of every cell its ``FAILS`` names; every probe of
    the chapter with ``all_tests``) run for each seed and each verdict is decided against the
    reference's record for that seed, through the real wire format. A mutant must fail every grade cell of its
    ``FAILS`` for every seed and pass every other one; an alternative must pass them all. This is the grading
    logic of :mod:`course.grading.authoring.trial`'s end-to-end check without a sandboxed notebook per submission (our own
    variants are trusted code), so every mutant can be checked in a test run that must stay short.
    """
    # Most variants of a packaging exercise compile the same program at this one seed: g++ runs once for each
    # distinct source (course.grading.authoring.compiles; the sweep too).
    from course.grading.authoring.compiles import reuse_identical_compiles

    with reuse_identical_compiles() as memo:
        report = _variants(chapter, root, seeds, names, extra, all_tests)
    reused = f" ({memo.skipped} identical C++ compiles not run again)" if memo is not None and memo.skipped else ""
    log(f"{chapter}: {len(report.lost)} variants x {len(seeds)} seed(s) in {report.seconds:.1f} s, "
        f"{len(report.problems)} problem(s){reused}")
    return report


def _variants(chapter: str, root: Path, seeds: list[int], names: list[str] | None, extra: list | None,
              all_tests: bool) -> VariantReport:
    from course.grading.judge.answers import load_variants
    from course.grading.judge.references import reference_cells, reference_notebook

    root = Path(root).resolve()
    t0 = time.perf_counter()
    report = VariantReport(chapter=chapter, seeds=list(seeds))
    judge, shell = _prepare(chapter, root, "variants")
    nb = reference_notebook(chapter, root)
    cells = reference_cells(nb)
    graded = records.graded_ids(nb)
    namespace, errors = _fresh_namespace(shell, cells, {})
    if errors:
        report.problems.append(f"the reference does not run: {errors[0]}")
        return report
    namespace = dict(namespace)  # the shell's namespace is cleared for each variant
    codes = {c.test: c for c in judge.codes()}
    untested = sorted(set(graded) - set(codes))
    refs = {(seed, test): _one(code, seed, namespace)[0] for seed in seeds for test, code in codes.items()}
    for (seed, test), ref in refs.items():
        if not ref.get("ok"):
            report.problems.append(f"seed {seed}: the reference fails the probe of {test}: {ref.get('error')}")
    chosen = [v for v in load_variants(chapter, "mutant", root) + load_variants(chapter, "alternative", root)
              if names is None or v.name in names] + list(extra or [])
    from course.grading.records import exercise_of

    exercise = exercise_of(nb)
    for v in chosen:
        lost = set()
        tests = {t: c for t, c in codes.items() if all_tests or exercise.get(t) == v.cell or t in v.fails}
        report.profiles[v.name] = []
        for seed in seeds:  # as a grading does: a fresh kernel per submission, one seed, every probe in order
            ns, errors = _fresh_namespace(shell, cells, {v.cell: v.source})
            if errors and v.kind == "alternative":
                report.problems.append(f"alternative {v.name} does not run: {errors[0]}")
            profile = {}
            for test, code in tests.items():
                got, _ = _one(code, seed, ns)
                try:
                    verdict = decide(judge.probes[test], got, refs[(seed, test)])
                    passed, profile_code = verdict.passed, verdict.code
                except Exception:  # noqa: BLE001 - a verdict that cannot decide: the cell fails
                    passed, profile_code = False, "form"
                if not passed:
                    lost.add(test)
                    profile[test] = profile_code
                elif test in v.fails and v.kind == "mutant":
                    report.problems.append(f"seed {seed}: mutant {v.name} keeps the points of {test}")
            report.profiles[v.name].append(profile)
        lost = sorted(lost)
        report.lost[v.name] = list(lost)
        if v.kind not in ("mutant", "alternative"):  # an answer under study (tools/blind.py): only what it lost
            continue
        unexpected = sorted(set(lost) - set(v.fails))
        if unexpected:
            report.problems.append(f"{v.kind} {v.name} loses {unexpected}, which it should keep")
        missing = sorted(set(v.fails) - set(lost) - set(untested))
        if missing and not any(v.name in p and "keeps the points" in p for p in report.problems):
            report.problems.append(f"mutant {v.name} keeps the points of {missing}")
    report.seconds = time.perf_counter() - t0
    return report


def main_args(chapter: str, seeds: int = 100, donothing_seeds: int = 10, once: bool = False,
              root: Path | None = None, twice_seeds: int | None = None, costly_seeds: int | None = None) -> int:
    """``python -m course.grading sweep CHAPTER``: print the timings and every problem; exit 1 if any."""
    root = root or paths.REPO
    t0 = time.perf_counter()
    report = run(chapter, root, sweep_seeds(seeds), donothing_seeds,
                 twice=False if once else (True if twice_seeds is None else twice_seeds), costly_seeds=costly_seeds)
    print(report.table())
    if report.skipped_costly:
        print(f"probes that compile ran for the first {costly_seeds} seeds only ({report.skipped_costly} runs left "
              f"out; `make sweep` runs them for every seed)")
    if report.reused_compiles:
        print(f"{report.reused_compiles} identical C++ compiles not run again (each distinct source compiled once)")
    for name, n in report.donothing.items():
        print(f"do-nothing {name}: lost {n} grade-cell checks")
    for line in report.problems:
        print("PROBLEM:", line)
    print(f"{chapter}: sweep of {seeds} seeds in {time.perf_counter() - t0:.1f} s, {len(report.problems)} problem(s)")
    sys.stdout.flush()
    return 1 if report.problems else 0


def variants_main(chapter: str, seeds: int = 2, only: list[str] | None = None, root: Path | None = None,
                  all_tests: bool = False) -> int:
    """``python -m course.grading variants CHAPTER``: what each variant lost, and every problem; exit 1 if any."""
    root = root or paths.REPO
    report = variants(chapter, root, sweep_seeds(seeds, key=b"variants"), names=only, all_tests=all_tests)
    for name, lost in report.lost.items():
        print(f"{name:<40} lost {', '.join(lost) or 'nothing'}")
    report.problems += diagnosis_check(chapter, root, report)
    for line in report.problems:
        print("PROBLEM:", line)
    print(f"{chapter}: {len(report.lost)} variants in {report.seconds:.1f} s, {len(report.problems)} problem(s)")
    sys.stdout.flush()
    return 1 if report.problems else 0


def diagnosis_check(chapter: str, root: Path, report: VariantReport, log=print) -> list[str]:
    """The saved profiles against this run (seeds they do not hold): they must be current, and no mutant may be
    diagnosed as a mistake with another note. Prints the rates; returns the problems."""
    from course.grading.judge import diagnosis
    from course.grading.records import exercise_of
    from course.grading.judge.references import reference_notebook

    cat = diagnosis.load(chapter, root)
    if not cat.known:
        return [cat.why]
    mine = {n: p for n, p in report.profiles.items() if any(k.name == n for k in cat.known)}
    ev = diagnosis.evaluate(cat, mine, exercise_of(reference_notebook(chapter, root)))
    log(f"{chapter}: {ev.summary()}")
    return [f"diagnosis names another mistake: {w}" for w in ev.wrong]


def profiles_main(chapter: str, seeds: int = 2, root: Path | None = None) -> int:
    """``python -m course.grading profiles CHAPTER``: every mutant's profile for ``seeds`` seeds, saved beside the
    mutants (:mod:`course.grading.judge.diagnosis`); exit 1 if a mutant does not lose exactly its cells."""
    from course.grading.judge import diagnosis
    from course.grading.judge.answers import load_variants

    root = Path(root or paths.REPO).resolve()
    names = [v.name for v in load_variants(chapter, "mutant", root)]
    chosen = sweep_seeds(seeds, key=b"profiles")
    report = variants(chapter, root, chosen, names=names)
    for line in report.problems:
        print("PROBLEM:", line)
    if report.problems:
        return 1
    out = diagnosis.save(chapter, root, chosen, {n: report.profiles[n] for n in names})
    diagnosis._CACHE.clear()
    cat = diagnosis.load(chapter, root)
    notes = {k.note for k in cat.known if k.note}
    print(f"{chapter}: {len(names)} mutant profiles x {seeds} seed(s), {len(notes)} distinct notes -> "
          f"{out.relative_to(root)}")
    ev = diagnosis.cross_check(chapter, root)
    if ev is not None:
        print(f"{chapter}: {ev.summary()} (later seeds against the first seed's profiles)")
        for line in ev.wrong:
            print(f"  {line}")
    return 0
