"""Student-controlled text, made safe for where it is shown: a terminal, HTML, markdown.

Everything a submission can put into a string (an exception message, a
``repr``, a file name, a printed line) passes through here before the
instructor's side prints or renders it:

* :func:`printable` for a terminal or a log: control characters (ANSI escape
  sequences, carriage returns, the bell, OSC window-title and clipboard
  sequences, C1 controls) and bidirectional overrides are removed, and the
  text is capped.
* :func:`cap` for any message: at most a few hundred characters, with the
  cut said.
* :func:`markdown_block` for markdown that a renderer turns into HTML (the
  gradebook comment that ``generate_feedback`` renders, ``grader.md``): the text
  becomes an indented code block, where neither HTML nor markdown syntax is
  interpreted, and line breaks survive.
* :func:`fenced` for a fenced code block whose fence is longer than any run of
  backticks in the text.
"""
from __future__ import annotations

import html
import re
import unicodedata

STUDENT_TEXT_CHARS = 300  # an exception text or a repr from a submission, as shown to anyone

# C0 controls except tab and newline, DEL, C1 controls, and the bidirectional embedding/override/isolate marks.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Whole escape sequences first (CSI ... final byte; OSC ... BEL or ST), so their parameters do not survive.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")


def cap(text: object, limit: int = STUDENT_TEXT_CHARS) -> str:
    """``str(text)`` cut to ``limit`` characters, saying how much was cut."""
    s = text if isinstance(text, str) else str(text)
    if len(s) <= limit:
        return s
    return s[:limit] + f" [... {len(s) - limit} more characters not shown]"


def printable(text: object, limit: int | None = 2000, keep_newlines: bool = True) -> str:
    """``text`` with escape sequences and control characters removed (safe to print to a terminal), capped."""
    s = text if isinstance(text, str) else str(text)
    if limit is not None and len(s) > 4 * limit:  # don't scan megabytes to show a few hundred characters
        s = s[:4 * limit]
    s = _ESCAPES.sub("", s)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    s = _CONTROL.sub("", s)
    if not keep_newlines:
        s = s.replace("\n", " ").replace("\t", " ")
    s = "".join(ch for ch in s if unicodedata.category(ch) not in ("Cs", "Co"))
    return cap(s, limit) if limit is not None else s


def one_line(text: object, limit: int = STUDENT_TEXT_CHARS) -> str:
    """A single printable line (for a table cell or a log line)."""
    return printable(text, limit, keep_newlines=False)


def markdown_block(text: object, limit: int | None = 4000) -> str:
    """``text`` as an indented markdown code block: rendered verbatim (no HTML, links or emphasis), lines kept."""
    s = printable(text, limit)
    return "\n".join("    " + line for line in s.split("\n"))


def fenced(text: object, info: str = "", limit: int | None = 4000) -> str:
    """``text`` in a fenced code block whose fence no run of backticks inside can close."""
    s = printable(text, limit)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{s}\n{fence}"


def html_text(text: object, limit: int | None = 4000) -> str:
    """``text`` escaped for HTML (and made printable)."""
    return html.escape(printable(text, limit), quote=True)
