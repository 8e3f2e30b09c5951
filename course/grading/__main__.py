"""``python -m course.grading COMMAND``: the instructor's commands.

* ``autograde CHAPTER [--force]``: grade every ``submitted/<student>/CHAPTER/``
  through the judge (the documented way to grade; ``make autograde``).
* ``grade-class CHAPTER... [--jobs N] [--force]``: a whole class, in parallel,
  resumable, with damaged submissions repaired or reported (``make grade-class``).
* ``references CHAPTER --out FILE``: compute the reference results (used by the
  in-kernel path of stock ``nbgrader autograde``).
* ``check``, ``run``, ``demo``, ``release``: the known-answer harness (see
  :mod:`course.grading.planner`).
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv else ""
    if command == "autograde":
        from course.grading.autograde import main as autograde_main
        return autograde_main(argv[1:])
    if command == "grade-class":
        from course.grading.classgrade import main as class_main
        return class_main(argv[1:])
    if command == "sweep":
        from course.grading.sweep import main as sweep_main
        return sweep_main(argv[1:])
    if command == "references":
        from course.grading.inkernel import references_main
        return references_main(argv[1:])
    from course.grading.planner import main as planner_main
    return planner_main(argv)


if __name__ == "__main__":
    sys.exit(main())
