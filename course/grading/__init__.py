"""The instructor's side of the course: grading that students' code cannot reach, organised by role.

* **Intake** (:mod:`~course.grading.intake`, :mod:`~course.grading.repair`): every submission's files pass
  through one place before anything copies them; damaged notebooks are rebuilt from the release.
* **Judge and wire** (:mod:`~course.grading.judge`, :mod:`~course.grading.wire`,
  :mod:`~course.grading.references`, :mod:`~course.grading.sweep`): hidden tests as probe + verdict, the
  plain-data format results come back in, the reference computed per student's seed.
* **Sandbox and worker** (:mod:`~course.grading.sandbox`, :mod:`~course.grading.worker`): the student's
  notebook in a bubblewrap sandbox, and the probes sent to it, with caps on everything that comes back.
* **Class grading** (:mod:`~course.grading.classgrade`): stage, run (local processes or Dask), record, report;
  :mod:`~course.grading.runs`: the saved runs, written by the class pipeline and read by nbgrader's preprocessor.
* **nbgrader integration** (:mod:`~course.grading.nbgrader_io`, :mod:`~course.grading.preprocessors`,
  :mod:`~course.grading.inkernel`): the one layer that calls and configures nbgrader.
* **Demo and known answers** (:mod:`~course.grading.known`): mutants, alternatives, attacks, ``make grade``;
  :mod:`~course.grading.exercise` prints one exercise's pieces side by side.
* Shared: :mod:`~course.grading.config` (every limit, as traitlets configuration), :mod:`~course.grading.records`
  (typed records), :mod:`~course.grading.text` (student text made safe to print and render).
* The command line: :mod:`~course.grading.cli` (``python -m course.grading``).

Serving the course to a class (the hub, the student repository) lives beside this package, in
:mod:`course.serving`. Students never import either (the student repository leaves both out); nothing in it is secret: the
hidden tests live in ``source/<chapter>/judge.py``, which is never released. Importing it stays light,
because :mod:`course.grading.wire` is imported inside students' kernels: this file imports nothing, and each
caller imports the module it uses (``from course.grading import known``), never a name through the package.
"""
