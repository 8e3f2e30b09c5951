"""Is the answer on the page? The share of each reference solution a student can read before solving it.

For every exercise (a solution cell of a source notebook), the reference's *code lines* are compared with
what a student can read without solving it: every cell of the chapter's **release** notebook except the
exercise's own solution cell (statements and hints included, HTML tags stripped), and the student-facing
helpers ``course/*.py``. A reference line counts as *on the page* when

- **verbatim**: its text, without whitespace, occurs anywhere on the page; or
- **nearly**: some line on the page (a code line, or code inside backticks, ``<code>`` or a fenced block) is
  the same line with its own names renamed. A line qualifies for this only when it keeps at least two
  names that say what it does (attribute names, keywords, builtins, ``torch``/``nn``/``F``...), so that
  ``y = f(x)`` does not match every call on the page.

A *code line* leaves out what the statement gives or what carries no answer: docstrings, comments,
``def``/``class`` lines (the signature is in the statement), imports (the last hint may name the API),
lines shorter than 12 characters without whitespace (``else:``, ``return out``), and **idioms**: lines
that the release notebooks of at least ``IDIOM_CHAPTERS`` chapters hold as a whole line, verbatim or
renamed (``super().__init__()``, ``with torch.no_grad():``, ``if mask is not None:``), which teach how
Python and torch are written, not the exercise.

``python -m course.grading onpage [CHAPTER ...]`` prints each exercise's share and where its lines are.
CONVENTIONS.md's rule: at most a third (``LIMIT``).
"""
from __future__ import annotations

import builtins
import html
import io
import keyword
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.utils import is_solution

from course.grading.judge import answers
from course.grading.authoring import notebooks
from course.grading import paths
from course.grading.records import grade_id

LIMIT = 1 / 3
MIN_CHARS = 12
IDIOM_CHAPTERS = 3
# names that say what a line does: renaming them would change the line's meaning
_MEANINGFUL = (set(keyword.kwlist) | set(dir(builtins))
               | {"torch", "nn", "F", "np", "math", "functools", "itertools", "collections", "dist", "self"})


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _docstring_lines(source: str) -> set[int]:
    """Line numbers (1-based) of string statements: docstrings, and strings standing alone."""
    out: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    starts_statement = True
    for tok in tokens:
        if tok.type == tokenize.STRING and starts_statement:
            out.update(range(tok.start[0], tok.end[0] + 1))
        if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            starts_statement = True
        elif tok.type not in (tokenize.NL, tokenize.COMMENT):
            starts_statement = False
    return out


def _key(line: str) -> str:
    """How a whole line is compared across chapters: renamed where it can be, else without whitespace."""
    return renamed(line) or _squash(line)


def idioms(root: Path = paths.REPO) -> set[str]:
    """Keys (``_key``) of the lines that at least ``IDIOM_CHAPTERS`` chapters' release notebooks hold."""
    count: dict[str, int] = {}
    for chapter in notebooks.chapters(root):
        nb = notebooks.read(notebooks.notebook_path(chapter, root, folder="release"))
        keys = set()
        for cell in nb.cells:
            lines = cell.source.splitlines() if cell.cell_type == "code" else _markdown_code(cell.source)
            keys.update(_key(line.strip()) for line in lines if line.strip())
        for key in keys:
            count[key] = count.get(key, 0) + 1
    return {key for key, n in count.items() if n >= IDIOM_CHAPTERS}


def code_lines(source: str, common: set[str] = frozenset()) -> list[str]:
    """The reference's lines that carry the answer (see the module's docstring), stripped; ``common``: idioms."""
    source = answers.strip_markers(source)
    docs = _docstring_lines(source)
    out = []
    for number, line in enumerate(source.splitlines(), 1):
        if number in docs:
            continue
        code = re.sub(r"\s+#.*$", "", line).strip()
        if not code or code.startswith("#"):
            continue
        if re.match(r"^(async\s+def|def|class|import|from\s+\S+\s+import)\b", code):
            continue
        if len(_squash(code)) < MIN_CHARS or _key(code) in common:
            continue
        out.append(code)
    return out


def renamed(line: str) -> str | None:
    """The line with its own names replaced by ``_``; None if too little of it would be left to compare."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    tokens = [t for t in tokens if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER,
                                                  tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    parts, meaningful, depth = [], 0, 0
    for i, tok in enumerate(tokens):
        text = tok.string
        depth += text in "([{" and tok.type == tokenize.OP
        depth -= text in ")]}" and tok.type == tokenize.OP
        if tok.type == tokenize.NAME:
            after_dot = i > 0 and tokens[i - 1].string == "."
            keyword_arg = depth > 0 and i + 1 < len(tokens) and tokens[i + 1].string == "="
            if after_dot or keyword_arg or text in _MEANINGFUL:     # an API's name: renaming changes the line
                meaningful += 1
            else:
                text = "_"
        parts.append(text)
    key = "".join(parts)
    if meaningful < 2 or len(key) < MIN_CHARS:
        return None
    return key


def _markdown_code(text: str) -> list[str]:
    """Lines of code a markdown cell shows: fenced blocks, ``<code>``/``<pre>`` and backtick spans."""
    text = html.unescape(text)
    out = []
    for block in re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S):
        out.extend(block.splitlines())
    for span in re.findall(r"<(?:code|pre)[^>]*>(.*?)</(?:code|pre)>", text, flags=re.S):
        out.extend(re.sub(r"<[^>]+>", "", span).splitlines())
    out.extend(re.findall(r"`([^`\n]+)`", text))
    return out


@dataclass
class Page:
    """What a student can read: the squashed text (for verbatim lines) and renamed code lines, with places."""
    text: list[tuple[str, str]] = field(default_factory=list)      # (place, squashed text)
    lines: dict[str, list[str]] = field(default_factory=dict)      # renamed key -> its places, in page order

    def add(self, place: str, text: str, code: list[str]) -> None:
        self.text.append((place, _squash(text)))
        for line in code:
            key = renamed(line)
            if key is not None:
                self.lines.setdefault(key, []).append(place)

    def find(self, line: str, skip: str | None = None) -> str | None:
        """Where ``line`` can be read (verbatim first, then renamed), outside place ``skip``; or None."""
        squashed = _squash(line)
        for place, text in self.text:
            if place != skip and squashed in text:
                return place
        key = renamed(line)
        return next((place for place in self.lines.get(key, ()) if place != skip), None) if key is not None else None


def page(chapter: str, root: Path = paths.REPO) -> Page:
    """The release notebook of ``chapter`` (places "cell N") and ``course/*.py`` (places "course/NAME")."""
    out = Page()
    nb = notebooks.read(notebooks.notebook_path(chapter, root, folder="release"))
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            out.add(f"cell {index}", html.unescape(re.sub(r"<[^>]+>", "", cell.source)),
                    _markdown_code(cell.source))
        else:
            out.add(f"cell {index}", cell.source, cell.source.splitlines())
    for path in sorted((root / "course").glob("*.py")):
        text = path.read_text()
        out.add(f"course/{path.name}", text, text.splitlines())
    return out


@dataclass(frozen=True)
class Share:
    """One exercise: its reference's code lines, and for each one where a student can read it (None: nowhere)."""
    chapter: str
    exercise: str
    places: tuple[tuple[str, str | None], ...]

    @property
    def seen(self) -> int:
        return sum(place is not None for _, place in self.places)

    @property
    def total(self) -> int:
        return len(self.places)

    @property
    def share(self) -> float:
        return self.seen / self.total if self.total else 0.0

    def describe(self) -> str:
        mark = "  OVER" if self.share > LIMIT else ""
        head = f"{self.chapter} {self.exercise}: {self.seen}/{self.total} lines on the page ({self.share:.0%}){mark}"
        lines = [f"    {place}: {line}" for line, place in self.places if place is not None]
        return "\n".join([head, *lines])


def shares(chapter: str, root: Path = paths.REPO, common: set[str] | None = None) -> list[Share]:
    """Each exercise of ``chapter``, in notebook order (``common``: the idioms, computed if not given)."""
    common = idioms(root) if common is None else common
    source = notebooks.read(notebooks.notebook_path(chapter, root))
    release = notebooks.read(notebooks.notebook_path(chapter, root, folder="release"))
    index = {grade_id(c): i for i, c in enumerate(release.cells) if is_solution(c)}
    seen = page(chapter, root)                       # read once; each exercise skips its own solution cell
    out = []
    for cell in source.cells:
        if not is_solution(cell):
            continue
        exercise = grade_id(cell)
        own = f"cell {index[exercise]}" if exercise in index else None
        out.append(Share(chapter, exercise,
                         tuple((line, seen.find(line, skip=own)) for line in code_lines(cell.source, common))))
    return out


def main(chapters: list[str], root: Path = paths.REPO) -> int:
    """Print every exercise's share; exit 1 if any is over ``LIMIT``."""
    over, common = 0, idioms(root)
    for chapter in chapters or notebooks.chapters(root):
        for item in shares(chapter, root, common):
            print(item.describe())
            over += item.share > LIMIT
    print(f"{over} exercise(s) over {LIMIT:.0%}")
    return 1 if over else 0
