"""Helpers for the PyTorch Internals course.

Import ``course`` (or any submodule) in a chapter's locked setup cell, before
any student code runs: ``course.checks`` binds the torch and builtin functions
it relies on at import time, so later monkeypatching cannot fool it.

While nbgrader executes a notebook (``NBGRADER_EXECUTION`` is set), importing
``course`` sends stderr to stdout, because nbgrader scores any test cell with
stderr output as 0 and a library warning must not fail correct work
(see :mod:`course.notebook`).
"""
import os as _os

if _os.environ.get("NBGRADER_EXECUTION"):
    from course.notebook import route_stderr_to_stdout as _route

    _route()

__all__ = ["checks", "device", "seed"]
