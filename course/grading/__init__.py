"""The instructor's side of the course: grading that students' code cannot reach, one folder per stage that a
submission goes through, in order.

* :mod:`~course.grading.intake`: every file of a submission is checked before anything copies it
  (``files``); a damaged notebook is rebuilt from the release (``repair``).
* :mod:`~course.grading.run`: the submission's notebook in a bubblewrap sandbox (``sandbox``), its kernel and the
  probes sent to it (``worker``), the plain-data format that comes back (``wire``), the grader's scratch
  (``scratch``) and the saved runs (``saved``).
* :mod:`~course.grading.judge`: hidden tests as probe + verdict (``verdicts``), the reference's results for each
  student's seed (``references``), a failing answer matched to a known mistake (``diagnosis``) among the known answers (``answers``: mutants and
  alternatives).
* :mod:`~course.grading.nbgrader`: the one wrapper around nbgrader (``wrapper``), one preprocessor per file
  (``execute``, ``record``, ``render``) and ``nbgrader collect`` through the intake (``collect``).
  :mod:`~course.grading.inkernel` is what the grade cells call (stock ``nbgrader autograde``); it keeps its name
  because every released notebook and gradebook holds it.
* :mod:`~course.grading.classroom`: a class's pipeline (``pipeline``, calling ``stage``, ``task`` through ``pools`` (local
  processes or Dask), ``gradebook``, ``tables`` and ``feedback``, in that order), Dask with mutual TLS (``dask_tls``) and the item analysis (``analysis``).
* :mod:`~course.grading.authoring`: proving the course: the attacks (``attacks``) and the known answers, graded for real in a scratch course (``trial``), the demo class (``demo``), the notebooks
  (``notebooks``: reading, running, releasing), the seed sweep and the variants (``sweep``), time estimates, how
  much of an answer is on the page, one exercise side by side.
* Shared, one module each: :mod:`~course.grading.config` (every limit), :mod:`~course.grading.records` (the
  notebook's nbgrader metadata and the typed records), :mod:`~course.grading.paths` (the instructor-only paths),
  :mod:`~course.grading.text` (student text made safe to print and render). The command line:
  :mod:`~course.grading.cli` (``python -m course.grading``).

Serving the course to a class (the hub, the student repository) lives beside this package, in
:mod:`course.serving`. Students never import either (the student repository leaves both out); nothing in it is
secret: the hidden tests live in ``source/<chapter>/judge.py``, which is never released. Importing it stays light,
because :mod:`course.grading.run.wire` is imported inside students' kernels: this file and ``run/__init__.py``
import nothing, and each caller imports the module it uses (``from course.grading.authoring import trial``).
"""
