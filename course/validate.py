"""A short Validate: nbgrader's Validate button, with a summary first and each failure in a few lines.

nbgrader's own report repeats "The following cell failed:" with the whole
test cell and its whole traceback for every failing test (about 20,000
characters for an untouched Chapter 1). :func:`install`, called from the
course's ``nbgrader_config.py``, wraps ``nbgrader.validator.Validator.validate``
so that what the Validate dialog (and ``nbgrader validate``) shows is:

* one summary entry: how many tests fail, in which exercises, and where to
  see the full list (the progress cell at the end of the chapter);
* then at most :data:`SHOWN` failures, each as the test's docstring line,
  the failing line, and the check's message (expected, got, likely cause).

The grade is not affected: Validate never grades, and nothing here runs
while grading.
"""
from __future__ import annotations

import re

SHOWN = 3
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def shorten_error(error: str, limit: int = 12) -> str:
    """The first ``limit`` meaningful lines of an error, ANSI colours removed."""
    lines = [line for line in _ANSI.sub("", error).splitlines() if line.strip() and not set(line.strip()) <= {"-"}]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
    return "\n".join(lines)


def first_line(source: str) -> str:
    """The docstring line of a test cell (what it checks), else its first line."""
    for line in source.splitlines():
        if line.strip():
            return line.strip().strip('"').strip()
    return ""


def summarise(results: dict, shown: int = SHOWN) -> dict:
    """Return nbgrader's validation ``results`` with the failures summarised and shortened."""
    failed = results.get("failed")
    if not failed:
        return results
    names = [first_line(f.get("source", "")) for f in failed]
    head = (f"{len(failed)} test cell(s) fail. "
            f"{'The first ' + str(shown) + ' are below.' if len(failed) > shown else 'They are below.'} "
            "Run the progress cell at the end of the notebook for the list per exercise.")
    summary = {"source": head, "error": "Failing: " + "; ".join(n[:70] for n in names[:12])
               + (f"; and {len(names) - 12} more" if len(names) > 12 else "")}
    short = [{"source": first_line(f.get("source", "")), "error": shorten_error(f.get("error", ""))}
             for f in failed[:shown]]
    out = dict(results)
    out["failed"] = [summary] + short
    return out


def install() -> bool:
    """Wrap nbgrader's ``Validator.validate`` once; return whether it was wrapped now."""
    try:
        from nbgrader.validator import Validator
    except ImportError:  # pragma: no cover - nbgrader not installed
        return False
    if getattr(Validator.validate, "_course_short", False):
        return False
    original = Validator.validate

    def validate(self, filename):
        return summarise(original(self, filename))

    validate._course_short = True
    Validator.validate = validate
    return True
