"""The one nbgrader configuration of the course (nbgrader 0.9.6).

Run nbgrader from this folder with the virtual environment's bin/ on PATH
(nbgrader calls `alembic`): `make autograde`, `make grade-class`, `make release`,
or activate .venv.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader)
HERE = os.path.dirname(os.path.abspath(__file__))  # noqa: F821  (traitlets sets __file__)

c.CourseDirectory.course_id = "pytorch-internals"
# Absolute, so that nbgrader does not warn "root '.' is not absolute" on every call.
c.CourseDirectory.root = HERE
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
# The gradebook: gradebook.db beside this file, unless COURSE_GRADEBOOK_URL names another
# (`make instructor GRADEBOOK=.demo/gradebook.db` shows the demo class; postgresql+psycopg2://... works).
if os.environ.get("COURSE_GRADEBOOK_URL"):
    c.CourseDirectory.db_url = os.environ["COURSE_GRADEBOOK_URL"]
# Keep build products and caches out of the student release. judge.py holds a chapter's
# hidden tests: it must never reach release/ or autograded/.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*", "judge.py", "exercises"]

# The stub a student sees where the solution was: it says what to do.
c.ClearSolutions.code_stub = {
    "python": "# YOUR CODE HERE: implement what the exercise above asks for, then run the tests below.\n"
              "raise NotImplementedError(\"Exercise not done yet: write your solution here\")",
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Per cell: the slowest real cell (a small Lightning fit, a DDP launch) takes about 20 s
# on a 2-core CPU; 120 s leaves room for a slow laptop, and a runaway student loop is
# interrupted instead of hanging the grader.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
c.Execute.startup_timeout = 120
# Keep nbclient's default store_widget_state=True: with False, a widget that writes into
# an Output widget crashes autograde (KeyError in output_widget.py).

c.Exchange.path_includes_course = True
# The local exchange behind the Assignments tab (`make lab`, `make instructor` create it and release the
# chapters into it): $COURSE_EXCHANGE if set (the hub sets it), else ~/.local/share/pytorch-internals/exchange
# ($XDG_DATA_HOME), the folder every student lab on this machine uses too, the student repository's included.
from course.lab import default_exchange as _default_exchange  # noqa: E402
c.Exchange.root = str(_default_exchange())

# Grading goes through the judge (course/grading/nbgrader/execute.py): each submission runs in a
# sandbox, and every grade cell is decided outside the student's kernel against references
# computed from the reference solution. This applies to `nbgrader autograde`, to
# `python -m course.grading autograde` and to Formgrader's autograde button alike.
# COURSE_GRADING=stock restores nbgrader's own in-kernel grading (the hidden tests then run
# inside the student's kernel: not a trust boundary).
# install() also makes every rendering safe (Formgrader's pages, generate_feedback: no script or
# raw HTML from a student), routes `nbgrader collect` through the intake (no link followed), and
# makes a plain `nbgrader autograde` refuse a submission folder holding links or special files.
c.JudgeExecute.course_root = HERE
from course.grading.nbgrader.wrapper import install as _install_judge  # noqa: E402

_install_judge(c, judge=os.environ.get("COURSE_GRADING", "judge") != "stock")

# The caps on every submission (files taken, memory, time, result and output bytes) are
# course.grading.config.GradingLimits; set any of them here, e.g.
# c.GradingLimits.memory_gib = 6
# The grader skips the demonstrations whose results no answer, test cell or hidden test reads
# (course/grading/run/needed.py; each report lists them). To run every cell, as stock nbgrader does:
# c.GradingLimits.run_every_cell = True

# Validate (the toolbar button and `nbgrader validate`): a summary, then the first failures in a few lines.
from course.validate import install as _short_validate  # noqa: E402

_short_validate()
