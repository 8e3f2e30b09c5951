"""Rewrite authored mutants as the few lines they change in the reference (``CHANGES``), where that is shorter.

    python tools/mutant_changes.py CHAPTER [CHAPTER ...] [--write]

A mutant written as a whole copy of the reference cell with one to three lines changed hides its mistake among
lines that are not it. For each authored mutant (not ``blind_*``: blind answers stay whole, as students wrote
them) this finds the lines that differ from the reference, with just enough context for each old text to be found
exactly once, and, where at most four such changes are under half of the mutant's lines, writes ``CHANGES``
instead of ``SOURCE``. Every rewrite is checked: the file loaded again must give the very same source
(``course.grading.judge.answers.load_variants``), so nothing graded changes (and neither does the profile key). Without
``--write`` it only says what it would do.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.grading.judge import answers  # noqa: E402
from course.grading.authoring import notebooks  # noqa: E402

MAX_CHANGES = 4


def _unique(base_lines: list[str], lo: int, hi: int) -> bool:
    text = "".join(base_lines)
    old = "".join(base_lines[lo:hi])
    return bool(old) and text.count(old) == 1


def changes_for(base: str, source: str) -> list[tuple[str, str]] | None:
    """The (old, new) pairs that turn ``base`` into ``source``, whole lines, each old text unique; None if none work."""
    a, b = base.splitlines(keepends=True), source.splitlines(keepends=True)
    hunks = [[i1, i2, j1, j2] for tag, i1, i2, j1, j2 in
             difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]
    if not hunks:
        return None
    for h in hunks:  # add context until the old text is found exactly once
        while not _unique(a, h[0], h[1]):
            if h[0] > 0:
                h[0] -= 1
                h[2] -= 1
            elif h[1] < len(a):
                h[1] += 1
                h[3] += 1
            else:
                return None
    merged: list[list[int]] = []
    for h in hunks:
        if merged and h[0] <= merged[-1][1]:
            merged[-1][1], merged[-1][3] = max(merged[-1][1], h[1]), max(merged[-1][3], h[3])
        else:
            merged.append(h)
    return [("".join(a[i1:i2]), "".join(b[j1:j2])) for i1, i2, j1, j2 in merged]


def literal(text: str) -> str | None:
    """``text`` as a Python literal that reads well: '' or a triple-quoted string starting on a line of its own."""
    if not text:
        return "''"
    for quote in ("'''", '"""'):
        if quote in text or quote[0] + "\\" in text or text.endswith(quote[0]):
            continue
        prefix = "r" if "\\" in text else ""
        return f"{prefix}{quote}\n{text}{quote}"
    return None


def rewrite(path: Path, chapter: str) -> tuple[str, str | None]:
    """(what happened, the new file text or None)."""
    spec = importlib.util.spec_from_file_location(f"_mc_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, "SOURCE"):
        return "already CHANGES", None
    source = answers.textwrap_dedent(mod.SOURCE)
    base = answers.reference_solution(answers.solution_cells(notebooks.read(notebooks.notebook_path(chapter))), mod.CELL,
                                    str(path))
    pairs = changes_for(base, source)
    if pairs is None:
        return "kept whole (no line-level change found)", None
    changed = sum(len(o.splitlines()) + len(n.splitlines()) for o, n in pairs)
    if len(pairs) > MAX_CHANGES or changed * 2 >= len(source.splitlines()):
        return f"kept whole ({len(pairs)} changes, {changed} of {len(source.splitlines())} lines)", None
    items = []
    for old, new in pairs:
        lo, ln = literal(old), literal(new)
        if lo is None or ln is None:
            return "kept whole (quotes)", None
        items.append(f"({lo}, {ln}),")
    text = path.read_text()
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "SOURCE" for t in n.targets))
    lines = text.splitlines(keepends=True)
    block = ("#: the reference solution with these lines changed (old, new)\nCHANGES = [\n"
             + "\n".join(items) + "\n]\n")
    new_text = "".join(lines[:node.lineno - 1]) + block + "".join(lines[node.end_lineno:])
    return f"{len(pairs)} change(s), {changed} lines instead of {len(source.splitlines())}", new_text


def check(path: Path, chapter: str, expected: str) -> None:
    got = {v.name: v.source for v in answers.load_variants(chapter, "mutant")}[path.stem]
    if got != expected:
        raise SystemExit(f"{path}: the rewrite does not give the same source; restore it from git")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("chapters", nargs="+")
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    counts = {"rewritten": 0, "kept": 0}
    for chapter in args.chapters:
        before = {v.name: v.source for v in answers.load_variants(chapter, "mutant")}
        for path in sorted((REPO / "source" / chapter / "exercises").glob("*/mutants/*.py"), key=lambda p: p.name):
            if path.name.startswith(("_", "blind_")):
                continue
            what, new_text = rewrite(path, chapter)
            print(f"{chapter}/{path.stem}: {what}")
            if new_text is None:
                counts["kept"] += 1
                continue
            counts["rewritten"] += 1
            if args.write:
                old_text = path.read_text()
                path.write_text(new_text)
                try:
                    check(path, chapter, before[path.stem])
                except BaseException:
                    path.write_text(old_text)
                    raise
    print(f"{counts['rewritten']} mutants {'rewritten' if args.write else 'to rewrite'} as CHANGES, "
          f"{counts['kept']} kept whole")
    return 0


if __name__ == "__main__":
    sys.exit(main())
