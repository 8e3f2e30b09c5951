"""Serving the course to a class (instructor side, beside :mod:`course.grading`, not inside it).

* :mod:`course.serving.hub`: a JupyterHub class on one machine (``make hub``), its users, modes and guards.
* :mod:`course.serving.publish`: the student repository (``make publish``), with no solution and no hidden test.

Neither is ever copied to students: the student repository and the hub's student library hold ``course`` without
``course/grading`` and ``course/serving``.
"""
