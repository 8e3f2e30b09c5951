"""``python -m course.grading COMMAND``: the instructor's one command line.

Grading
  autograde CHAPTER          grade submitted/*/CHAPTER through the judge (``make autograde``)
  grade-class CHAPTER...     a whole class, several chapters (``make grade-class``); ``--dask tls://...`` runs the
                             sandboxed submissions on a Dask cluster
  dask-certs [DIR]           the Dask cluster's private CA and certificates (``make dask-certs``)
  dask-cluster               a TLS Dask scheduler and workers on 127.0.0.1 (``make dask-cluster``)
Authoring
  check CHAPTER...           grade the known answers (reference, release, mutants, alternatives, attacks)
  sweep CHAPTER              every hidden test on the reference for 100 seeds, in one process
  variants CHAPTER           every mutant and alternative through the judge's verdicts, in one process
  profiles CHAPTER...        every mutant's verdict profile, for diagnosing students' mistakes (``make profiles``)
  run CHAPTER...             execute a chapter as a student (or ``--grading``) and print its time
  release [CHAPTER...]       regenerate release/ from source/ (``make release``)
Class
  demo [CHAPTER...]          the demo class (``make grade``)
  publish DEST               write the student repository: what students may see, and nothing else
  hub ...                    a JupyterHub class on this machine (``make hub``)
  references CHAPTER         reference results for stock in-kernel grading (used by nbgrader itself)
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from course.grading.paths import DASK_CERTS
from course.grading.text import one_line


def _grading_options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--force", action="store_true", help="regrade submissions that are unchanged and already graded")
    p.add_argument("--jobs", type=int, default=0, help="submissions at once (default: the number of cores)")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run the sandboxed submissions on the Dask scheduler at ADDRESS (tls://host:8786 only)")
    p.add_argument("--dask-certs", metavar="DIR", type=Path, default=None,
                   help="the certificates of `dask-certs` (default: .judge/dask)")
    p.add_argument("--dask-allow-no-sandbox", action="store_true",
                   help="let Dask workers without bubblewrap grade (default: they get no submission)")
    p.add_argument("--seed", type=int, default=0, help="a fixed key for the students' seeds (default: .judge/secret)")
    p.add_argument("--db", type=Path, default=None, help="a SQLite gradebook file (default: gradebook.db)")
    p.add_argument("--db-url", default=None, help="any gradebook URL nbgrader accepts (postgresql://...)")
    p.add_argument("--memory-gib", type=float, default=None, help="memory per submission (GradingLimits.memory_gib)")
    p.add_argument("--wall-seconds", type=float, default=None, help="time per submission (GradingLimits.wall_seconds)")
    p.add_argument("--feedback", action="store_true", help="write feedback/<student>/<chapter>/grader.md")
    p.add_argument("--show-tests", action="store_true", help="include the hidden tests' probe code in grader.md")
    p.add_argument("--solutions", action="store_true",
                   help="with --feedback: the worked solution of each exercise a student attempted, and why it is "
                        "right, in grader.md; held back for a chapter with no due date in the gradebook, or whose last due date "
                        "(extensions included) has not passed")
    p.add_argument("--require-sandbox", action="store_true", help="refuse to grade without bubblewrap")
    p.add_argument("--no-progress", action="store_true")
    return p


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m course.grading", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n", 2)[2])
    sub = p.add_subparsers(dest="command", required=True)
    opts = _grading_options()
    a = sub.add_parser("autograde", parents=[opts], help="grade one chapter's submissions")
    a.add_argument("chapter")
    a.add_argument("--student", action="append", help="only these students (repeatable)")
    a.set_defaults(func=lambda args: _grade(args, [args.chapter], args.student), stops_cleanly=True)
    g = sub.add_parser("grade-class", parents=[opts], help="grade a class over several chapters")
    g.add_argument("chapters", nargs="+")
    g.add_argument("--zip", type=Path, default=None, help="an LMS download to check and unpack first")
    g.add_argument("--zip-regexp", default=r".*/(?P<student_id>[^/_]+)_(?P<file_id>[^/]+)\.ipynb$",
                   help="the student id and notebook in the archive's file names (default: <student>_<notebook>)")
    g.set_defaults(func=lambda args: _grade(args, args.chapters, None), stops_cleanly=True)
    c = sub.add_parser("check", help="grade the known answers of some chapters in a scratch course")
    c.add_argument("assignments", nargs="*")
    c.add_argument("--stock", action="store_true", help="grade in-kernel, as stock nbgrader (COURSE_GRADING=stock)")
    c.add_argument("--attacks", action="store_true", help="add the generic attack submissions")
    c.add_argument("--only", action="append", help="only submissions whose name starts with this")
    c.add_argument("--seed", type=int, default=None, help="a fixed key for the hidden inputs")
    c.add_argument("--jobs", type=int, default=1)
    c.add_argument("-v", "--verbose", action="store_true", help="print the judge's message of every failed cell")
    c.set_defaults(func=_check, stops_cleanly=True)
    s = sub.add_parser("sweep", help="every hidden test on the reference, for many seeds, in one process")
    s.add_argument("chapter")
    s.add_argument("--seeds", type=int, default=100)
    s.add_argument("--donothing-seeds", type=int, default=10)
    s.add_argument("--once", action="store_true", help="run each probe once per seed (no determinism check)")
    s.add_argument("--twice-seeds", type=int, default=None,
                   help="run each probe twice (the determinism check) for the first N seeds only (default: all)")
    s.add_argument("--costly-seeds", type=int, default=None,
                   help="probes with a time limit of their own (they compile) for the first N seeds only")
    s.set_defaults(func=_sweep)
    va = sub.add_parser("variants", help="every mutant and alternative through the judge's verdicts, in one process")
    va.add_argument("chapter")
    va.add_argument("--seeds", type=int, default=2)
    va.add_argument("--only", action="append", help="only these variants (by file name, without .py)")
    va.add_argument("--all-tests", action="store_true",
                    help="every probe of the chapter for each variant (default: its exercise's and its FAILS')")
    va.set_defaults(func=_variants)
    pr = sub.add_parser("profiles", help="every mutant's verdict profile, for diagnosing students' mistakes")
    pr.add_argument("chapters", nargs="+")
    pr.add_argument("--seeds", type=int, default=2)
    pr.add_argument("--course", type=Path, default=None, help="the course folder (default: this repository)")
    pr.set_defaults(func=_profiles)
    ex = sub.add_parser("exercise", help="one exercise side by side: statement, reference, visible tests, probes, "
                                         "verdicts, mutants and alternatives (without EXERCISE: the list)")
    ex.add_argument("chapter")
    ex.add_argument("exercise", nargs="?", default=None, help="a solution cell's grade id")
    ex.set_defaults(func=_exercise)
    op = sub.add_parser("onpage", help="how much of each reference solution a student can read on the page "
                                        "(exit 1 if an exercise is over a third)")
    op.add_argument("chapters", nargs="*")
    op.set_defaults(func=_onpage)
    r = sub.add_parser("run", help="execute chapters top to bottom and print their wall time")
    r.add_argument("assignments", nargs="*")
    r.add_argument("--grading", action="store_true", help="set NBGRADER_EXECUTION=autograde")
    r.add_argument("--record", action="store_true",
                   help="keep each student-mode wall time in benchmarks/student_runs.json for the time estimates")
    r.set_defaults(func=_run)
    es = sub.add_parser("estimates", help="each chapter's time estimate (reading + running + exercises); exit 1 "
                                          "if a title cell says otherwise")
    es.add_argument("chapters", nargs="*")
    es.add_argument("--write", action="store_true", help="put the counted estimate into each source title cell")
    es.set_defaults(func=_estimates)
    rel = sub.add_parser("release", help="regenerate release/ from source/")
    rel.add_argument("assignments", nargs="*")
    rel.set_defaults(func=_release)
    d = sub.add_parser("demo", help="make grade: the demo class")
    d.add_argument("only", nargs="*")
    d.add_argument("--jobs", type=int, default=0)
    d.set_defaults(func=_demo, stops_cleanly=True)
    pub = sub.add_parser("publish", help="write the student repository")
    pub.add_argument("dest", type=Path)
    pub.add_argument("--force", action="store_true", help="replace DEST if it exists")
    pub.set_defaults(func=_publish)
    dc = sub.add_parser("dask-certs", help="a private CA and the Dask cluster's certificates, keys 0600 in a 0700 folder")
    dc.add_argument("dir", type=Path, nargs="?", default=DASK_CERTS)
    dc.add_argument("--host", action="append", help="a host name or IP for the certificates (repeatable)")
    dc.set_defaults(func=_dask_certs)
    dk = sub.add_parser("dask-cluster", help="a TLS Dask scheduler and workers with the certificates of dask-certs")
    dk.add_argument("--certs", type=Path, default=DASK_CERTS)
    dk.add_argument("--workers", type=int, default=2, help="single-threaded worker processes (default 2)")
    dk.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    dk.add_argument("--port", type=int, default=8786)
    dk.add_argument("--dashboard", metavar="ADDRESS", default=None, help="the scheduler's dashboard (default: none)")
    dk.add_argument("--join", metavar="ADDRESS", default=None, help="only workers, for the scheduler at ADDRESS")
    dk.add_argument("--scheduler-file", type=Path, default=None)
    dk.set_defaults(func=_dask_cluster, stops_cleanly=True)
    # hub parses its own arguments (`hub --help`): everything after `hub` is passed on unread, and it runs as itself,
    # outside the private temporary folder and the after-command step of the other commands.
    hub = sub.add_parser("hub", help="a JupyterHub class on this machine (see `hub --help`)", add_help=False)
    hub.set_defaults(func=_hub, passthrough=True)
    ref = sub.add_parser("references", help="reference results for stock grading")
    ref.add_argument("chapter")
    ref.add_argument("--seed", type=int, required=True)
    ref.add_argument("--out", type=Path, required=True)
    ref.add_argument("--root", type=Path, default=Path.cwd())
    ref.set_defaults(func=_references)
    return p


def _grade(args, chapters: list[str], only: list[str] | None) -> int:
    from course.grading.classroom import pipeline, stage, tables
    from course.grading.classroom.gradebook import GradebookNotReady
    from course.grading.nbgrader import wrapper as nbgrader_io
    from course.grading.config import limits
    from course.grading.classroom.dask_tls import DaskSecurityError
    from course.grading.run.sandbox import detect

    root = Path.cwd()
    if args.dask:
        from course.grading.classroom import dask_tls
        try:
            dask_tls.check_address(args.dask)
            dask_tls.check_certs(args.dask_certs or root / dask_tls.DEFAULT_DIR, dask_tls.INSTRUCTOR)
        except dask_tls.DaskSecurityError as err:
            print(f"cannot grade: {err}", file=sys.stderr)
            return 2
    m = detect()
    if m.degraded:
        line = "!" * 78
        print(f"{line}\n!! WARNING: grading WITHOUT a sandbox: {m.why}\n!! Student code can read and write what "
              f"this user can, and use the network.\n!! Every report is flagged 'sandbox degraded'. Install "
              f"bubblewrap, or pass --require-sandbox.\n{line}", flush=True)
        if args.require_sandbox:
            print("refusing to grade without a sandbox (--require-sandbox)", file=sys.stderr)
            return 2
    else:
        print("Grading through the judge: each submission in a bubblewrap sandbox, verdicts outside the kernel.",
              flush=True)
    if getattr(args, "zip", None):
        if len(chapters) != 1:
            print("--zip needs exactly one chapter", file=sys.stderr)
            return 2
        stage.collect_zip(root, chapters[0], args.zip, args.zip_regexp)
    db_url = args.db_url or (nbgrader_io.sqlite(args.db) if args.db else None)
    lim = limits(root, memory_gib=args.memory_gib, wall_seconds=args.wall_seconds)
    try:
        result = pipeline.grade_class(root, chapters, args.jobs or None, args.force, db_url, args.seed, lim,
                                      args.feedback, args.show_tests, progress=not args.no_progress,
                                      dask=args.dask, only=only, dask_certs=args.dask_certs,
                                      require_sandbox=args.require_sandbox,
                                      dask_allow_degraded=args.dask_allow_no_sandbox,
                                      solutions=args.solutions)
    except (GradebookNotReady, DaskSecurityError) as err:
        print(f"cannot grade: {err}", file=sys.stderr)
        return 2
    print(tables.class_table(result, chapters))
    print(tables.summary_line(result))
    for line in tables.problems_text(result):
        print(line)
    return 1 if result.failures else 0


def _check(args) -> int:
    from course.grading.authoring import notebooks, trial

    status = 0
    for assignment in args.assignments or notebooks.chapters():
        subs = trial.plan(assignment, attacks=args.attacks)
        if args.only:
            subs = [s for s in subs if any(s.student.startswith(o) for o in args.only)]
        graded = trial.grade(assignment, subs, mode="stock" if args.stock else "judge", seed=args.seed,
                             jobs=args.jobs)
        print(f"== {assignment}: graded {len(subs)} submissions ({graded.mode}) in {graded.course.parent}, "
              f"{graded.wall_seconds:.1f} s")
        for s in subs:
            print(f"   {s.student:<26} {', '.join(s.variants) or '-'}")
        print(trial.table(graded))
        for student, r in sorted(graded.reports.items()):
            extra = f"; flags: {one_line('; '.join(r.get('flags', [])), 400)}" if r.get("flags") else ""
            print(f"   {student:<26} worker {r.get('seconds', 0):.1f} s{extra}")
            if args.verbose:
                for cell, c in r.get("cells", {}).items():
                    if c["judge"] != "pass":
                        print(f"      {cell}: {one_line(c['message'], 400)}")
        bad = trial.problems(graded)
        for line in bad:
            print("   PROBLEM:", line)
        status |= bool(bad)
    return status


def _sweep(args) -> int:
    from course.grading.authoring import sweep
    return sweep.main_args(args.chapter, args.seeds, args.donothing_seeds, args.once, twice_seeds=args.twice_seeds,
                           costly_seeds=args.costly_seeds)


def _variants(args) -> int:
    from course.grading.authoring import sweep
    return sweep.variants_main(args.chapter, args.seeds, args.only, all_tests=args.all_tests)


def _profiles(args) -> int:
    """One chapter here; several, each in a process of its own (``make profiles``). The profiles run every probe
    of a chapter in this process, and one chapter's probes can leave state that changes the next one's verdicts:
    after Chapter 6's, 53 of Chapter 4's mutants lost cells they keep when Chapter 4 runs alone."""
    if len(args.chapters) == 1:
        from course.grading.authoring import sweep
        return sweep.profiles_main(args.chapters[0], args.seeds, root=args.course)
    import subprocess
    import sys

    course = ["--course", str(args.course)] if args.course else []
    codes = [subprocess.run([sys.executable, "-m", "course.grading", "profiles", ch, "--seeds", str(args.seeds),
                             *course]).returncode for ch in args.chapters]
    return max(codes)


def _exercise(args) -> int:
    from course.grading.authoring import exercise
    return exercise.main(args.chapter, args.exercise)


def _onpage(args) -> int:
    from course.grading.authoring import onpage
    return onpage.main(args.chapters)


def _run(args) -> int:
    from course.grading.authoring import estimates, notebooks

    for name in args.assignments or notebooks.chapters():
        seconds, _ = notebooks.execute(notebooks.notebook_path(name), grading=args.grading)
        print(f"{name}: executed in {seconds:.1f} s ({'grading' if args.grading else 'student'} mode)")
        if args.record and not args.grading:
            estimates.record_run(name, seconds)
    return 0


def _estimates(args) -> int:
    from course.grading.authoring import estimates
    return estimates.main(args.chapters, write=args.write)


def _release(args) -> int:
    from course.grading.authoring import notebooks
    notebooks.release(only=args.assignments or None)
    return 0


def _demo(args) -> int:
    from course.grading.authoring import demo
    return demo.demo(only=args.only or None, jobs=args.jobs)


def _publish(args) -> int:
    from course.serving import publish
    return publish.main(args.dest, args.force)


def _dask_certs(args) -> int:
    from course.grading.classroom import dask_tls
    try:
        hosts = tuple(args.host or ()) or ("localhost", "127.0.0.1")
        for role, path in dask_tls.make_certs(args.dir, hosts).items():
            print(f"{role}: {path}")
    except dask_tls.DaskSecurityError as err:
        print(f"dask-certs: {err}", file=sys.stderr)
        return 2
    print(f"keys are 0600 in {args.dir} (0700); copy ca.pem, node.pem and node-key.pem to the worker nodes")
    return 0


def _dask_cluster(args) -> int:
    from course.grading.classroom import dask_tls
    try:
        return dask_tls.serve(args.certs, args.workers, args.host, args.port, args.dashboard, args.join,
                              args.scheduler_file)
    except dask_tls.DaskSecurityError as err:
        print(f"dask-cluster: {err}", file=sys.stderr)
        return 2


def _references(args) -> int:
    from course.grading.inkernel import write_references
    return write_references(args.chapter, args.seed, args.out, args.root)


def _hub(args, rest: list[str]) -> int:
    from course.serving.hub import main as hub_main
    return hub_main(rest)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    args, rest = p.parse_known_args(argv)
    if getattr(args, "passthrough", False):
        return args.func(args, rest)
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    from course.grading.run.scratch import private_tmpdir
    private_tmpdir()
    before = _stop_cleanly_on_terminate() if getattr(args, "stops_cleanly", False) else {}
    try:
        return args.func(args)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        from course.serving.hub import after_command
        after_command()  # on a hub: the course is private again after every grading command


def _stop_cleanly_on_terminate() -> dict:
    """For the commands that grade in child processes (autograde, grade-class, check, demo, dask-cluster): SIGTERM
    (``kill``, a scheduler's stop) and SIGHUP (a closed terminal) end the command as Ctrl-C does, by an exception,
    so that every ``finally`` runs. Without it, the grading processes of the submissions being graded (children of
    the pool's fork server, not of this process) went on to the end with their sandboxes, and the grader's private
    temporary folder stayed. Only a signal left at its default is taken (``nohup`` keeps SIGHUP ignored), and only
    the first: the clean-up it starts is not interrupted by a second one. Not for the commands that run notebook code
    in this process (sweep, variants, profiles): IPython and the probes catch SystemExit there. Returns the handlers
    it replaced (none outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    signals = [sig for sig in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) is signal.SIG_DFL]

    def stop(signum, _frame):
        for sig in signals:
            signal.signal(sig, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    return {sig: signal.signal(sig, stop) for sig in signals}
