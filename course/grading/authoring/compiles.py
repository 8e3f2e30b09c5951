"""Identical C++ compiles, run once per process: for the in-process variant check and the seed sweep (our own,
trusted code).

AOTInductor has no cache of its own (Inductor's FX graph cache is bypassed in AOT mode), so each call of
``aoti_compile_and_package`` runs g++ on its generated wrapper and kernel sources, about 8 s of Chapter 3's 12 s
package probe. The variant check (:func:`course.grading.authoring.sweep.variants`) runs that probe for every
variant of the exercise at one seed, and most of them package the same hidden program: the same generated
sources, compiled by the same command into the same file. The sweep (:func:`course.grading.authoring.sweep.run`)
runs it twice for each seed it tries, and the seed changes only the weights, not the generated program.
:func:`reuse_identical_compiles` makes this process skip a compile whose command line, working folder and source
files (each ``.cpp`` on the command line and each ``#include "..."`` file beside it) are byte for byte those of a
compile it already ran: it writes the object file that compile wrote (kept in memory) where the compiler would have
written it, as ccache does. Everything else still runs: export, code generation, assembling the weights, linking,
packaging, loading the package here and in a new process.

Only compiles of ``.cpp`` sources to object files (``-c``) are reused; assembling the weights (``.S``, which pulls
in the weights' bytes by path) and linking run every time. Never used in grading: each submission compiles in a
sandbox of its own, with caches of its own (course.grading.run.scratch.compile_caches).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex

_INCLUDE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.M)
_APPENDED = b"\n// Compile cmd\n"


def _digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _source_digest(text: bytes) -> str:
    """A source's digest, less the commands Inductor appends to it as comments once it has compiled it (a source
    compiled a second time carries the first compile's commands at its end: comment lines only, after the code)."""
    at = text.find(_APPENDED)
    if at >= 0 and all(not line.strip() or line.lstrip().startswith(b"//") for line in text[at:].splitlines()):
        text = text[:at]
    return hashlib.sha256(text).hexdigest()


def compile_key(cmd_line: str, cwd: str | None) -> tuple[tuple, str] | None:
    """(what the compile depends on, its output path) for a ``-c`` compile of ``.cpp`` sources; None for any other
    command (it is not reused)."""
    try:
        return _compile_key(cmd_line, cwd)
    except Exception:  # noqa: BLE001 - a command this reading does not follow (another torch): compiled, not reused
        return None


def _compile_key(cmd_line: str, cwd: str | None) -> tuple[tuple, str] | None:
    args = shlex.split(cmd_line)
    at = args.index("-o") + 1 if "-o" in args else len(args)
    if "-c" not in args or at >= len(args):
        return None
    output = args[at]
    sources = [a for a in args if a.endswith(".cpp")]
    if not sources or any(not os.path.isfile(s) for s in sources):
        return None
    if any(a.endswith((".S", ".s", ".c", ".cc", ".cxx", ".o", ".bin")) for a in args if a != output):
        return None
    parts = [cmd_line, cwd or ""]
    for source in sources:
        with open(source, "rb") as fh:
            text = fh.read()
        parts.append(_source_digest(text))
        for name in _INCLUDE.findall(text):
            beside = os.path.join(os.path.dirname(source), os.fsdecode(name))
            parts.append(f"{os.fsdecode(name)}={_digest(beside) if os.path.isfile(beside) else '-'}")
    return tuple(parts), output


def memoise(run, cap_bytes: int = 256 * 2 ** 20):
    """``run(cmd_line, cwd, ...)`` (Inductor's ``cpp_builder._run_compile_cmd``) that runs a repeated identical
    compile once (see the module docstring): the object file it wrote is kept, in this process's memory (up to
    ``cap_bytes`` in all), and written again in place of the repeat. ``.skipped`` counts the compiles not run again."""
    done: dict[tuple, bytes] = {}

    def run_once(cmd_line, cwd, *args, **kwargs):
        key = compile_key(cmd_line, cwd)
        if key is not None and key[0] in done:
            with open(key[1], "wb") as fh:
                fh.write(done[key[0]])
            run_once.skipped += 1
            return None
        result = run(cmd_line, cwd, *args, **kwargs)
        if key is not None and os.path.isfile(key[1]):
            size = os.path.getsize(key[1])
            if run_once.kept + size <= cap_bytes:
                with open(key[1], "rb") as fh:
                    done[key[0]] = fh.read()
                run_once.kept += size
        return result

    run_once.skipped = 0
    run_once.kept = 0
    run_once.course_memoised = True
    return run_once


@contextlib.contextmanager
def reuse_identical_compiles():
    """Within the block, :func:`memoise` wraps Inductor's compile command in this process; yields the wrapper (its
    ``skipped`` count), or None where this torch has no such function (then nothing changes). The command is put
    back at the end of the block."""
    try:
        from torch._inductor import cpp_builder
    except ImportError:
        yield None
        return
    run = getattr(cpp_builder, "_run_compile_cmd", None)
    if run is None or getattr(run, "course_memoised", False):
        yield run
        return
    cpp_builder._run_compile_cmd = memo = memoise(run)
    try:
        yield memo
    finally:
        cpp_builder._run_compile_cmd = run
