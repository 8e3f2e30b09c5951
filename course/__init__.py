"""Helpers for the PyTorch Internals course.

Import ``course`` (or any submodule) in a chapter's locked setup cell, before
any student code runs: ``course.checks`` binds the torch and builtin functions
it relies on at import time, so later monkeypatching cannot fool it.
"""

__all__ = ["checks", "device", "seed"]
