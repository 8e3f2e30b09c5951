"""The judge inside nbgrader: three preprocessors that ``nbgrader_config.py`` installs.

nbgrader stays the course's system: it finds the submissions, restores the
locked and test cells, keeps the gradebook, writes ``autograded/``, and later
serves Formgrader, ``generate_feedback`` and ``export``.

* :class:`JudgeExecute` replaces nbgrader's in-kernel ``Execute``. It takes
  the submission's sandboxed run (saved by ``grade-class``'s worker phase, or
  runs it now when a plain ``nbgrader autograde`` calls it), decides every
  grade cell in this process, which never executes student code, against the
  reference computed for this student's seed, and rewrites each grade cell's
  outputs so that nbgrader's ``SaveAutoGrades`` sees exactly the judge's
  verdict. It writes the instructor's report
  (``.judge/reports/<chapter>/<student>.json``). This process runs under a
  memory cap of its own (``GradingLimits.judge_memory_gib``).
* :class:`JudgeRecord` (after ``SaveAutoGrades``) writes the judge's scores
  and messages into the gradebook through nbgrader's ``Gradebook`` API. The
  messages, which quote the student's output, go in as an indented code
  block, so the markdown that ``generate_feedback`` renders shows them as
  text, with their line breaks.
* :class:`SafeNotebook` makes a notebook safe to render for a human. What
  the student controls is cleaned: their markdown is rendered by nbconvert's
  own renderer and the HTML cleaned against an allow-list (bleach), so no
  script, event handler, ``javascript:``/``data:``/``vbscript:`` link (inline,
  reference-style, autolink or raw ``<a>``) or unquoted attribute survives;
  HTML and markdown outputs likewise; JavaScript, SVG and widget outputs are
  dropped; an output's metadata keeps only what the templates read, checked
  (``width``/``height`` plain numbers, no ``filenames``, no ``isolated``);
  images kept, outputs capped in bytes. What the instructor owns (the
  release's markdown and raw cells) is put back from the release notebook,
  so statements and hints render as written. It runs last when grading (so
  the graded notebook in ``autograded/`` is already safe), and again inside
  every ``HTMLExporter`` (Formgrader's pages and ``generate_feedback``).
"""
from __future__ import annotations

import json
import math
import os
import re
import resource
import time
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Bool, Integer, Unicode

from course.grading import paths
from course.grading.judge import references
from course.grading.run import saved as runs
from course.grading.config import Limits, limits as course_limits
from course.grading.judge.verdicts import JudgeError, Verdict, check_coverage, decide, load
from course.grading.records import (TAMPER_FLAG, CellReport, Report, WorkerResult, clean_lines, exercise_of, grade_id,
                                    graded_ids, points)
from course.grading.run.sandbox import cap_memory, detect
from course.grading.text import clean_html, markdown_block, markdown_cell_html, markdown_html, one_line, printable



def verdicts_for(judge, result: WorkerResult, refs: dict[str, dict]) -> dict[str, Verdict]:
    """Judge every grade cell of a worker's result against the reference records of its seed."""
    out = {}
    for test in graded_ids(result.notebook):
        if test not in judge.probes:
            raise JudgeError(f"grade cell {test} has no probe in judge.py")
        try:
            out[test] = decide(judge.probes[test], result.results.get(test), refs[test])
        except MemoryError:
            out[test] = Verdict(test, False, "Your result was too large for the grader to compare.", kind="form")
    return out


def diagnose(chapter: str, root: Path, nb, verdicts: dict[str, Verdict], log=None) -> dict[str, dict]:
    """Name the known mistake each failing exercise behaves like (:mod:`course.grading.judge.diagnosis`): the note is
    added to the message of the exercise's first failing grade cell, which the graded notebook, the feedback and
    the gradebook show. Returns {solution cell: {"note", "known", "score"}} for the report."""
    from course.grading.judge import diagnosis

    failed = diagnosis.profile(verdicts)
    if not failed:
        return {}
    catalogue = diagnosis.load(chapter, root)
    if not catalogue.known:
        if log is not None and catalogue.why and not catalogue.said:
            log(catalogue.why + "; feedback names no known mistake")
            catalogue.said = True
        return {}
    exercise = exercise_of(nb)
    found = catalogue.diagnose(failed, exercise)
    for cell, d in found.items():
        first = next(t for t in graded_ids(nb) if exercise.get(t) == cell and t in failed)
        verdicts[first].message += "\n" + diagnosis.PREFIX + d.note
    return {cell: {"note": d.note, "known": list(d.known), "score": d.score} for cell, d in found.items()}


def _as_text(output) -> str:
    kind = output.get("output_type")
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    if kind == "stream":
        return output.get("text", "")
    plain = output.get("data", {}).get("text/plain", "")
    return plain if isinstance(plain, str) else "".join(plain)


def rewrite_grade_cells(nb, verdicts: dict[str, Verdict], kernel: dict[str, str]) -> None:
    """Make each grade cell's outputs say what the judge decided (and nothing nbgrader could score otherwise)."""
    for cell in nb.cells:
        if cell.cell_type != "code" or not is_grade(cell):
            continue
        gid = grade_id(cell)
        v = verdicts.get(gid)
        kept = []
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "error" or (kind == "stream" and o.get("name") == "stderr") or kind == "execute_result":
                label = "Your notebook's own run of this test: " if kind == "error" else ""
                kept.append(nbformat.v4.new_output("stream", name="stdout",
                                                   text=label + printable(_as_text(o), 4000).rstrip() + "\n"))
            else:
                kept.append(o)
        pts = points(cell)
        if v is None:
            continue
        if v.passed:
            kept.append(nbformat.v4.new_output("stream", name="stdout",
                                               text=f"Grader: passed ({pts:g}/{pts:g} points).\n"))
        else:
            head = f"Grader: failed (0/{pts:g} points)."
            if kernel.get(gid) == "pass" and v.visible_failed:
                head += " Your kernel reported this test as passed, but the same example fails when checked by the grader."
            kept.append(nbformat.v4.new_output("error", ename="GraderCheckFailed", evalue=v.message,
                                               traceback=[head, v.message]))
        cell.outputs = kept


def report_for(chapter: str, student: str, nb, result: WorkerResult, verdicts: dict[str, Verdict],
               seed: int) -> Report:
    """The instructor's report of one submission."""
    cells = {}
    flags = clean_lines(result.flags)
    for c in nb.cells:
        if c.cell_type != "code" or not is_grade(c):
            continue
        gid = grade_id(c)
        v = verdicts.get(gid)
        kernel = result.kernel_status.get(gid, "not run")
        cell = CellReport(points=points(c) if v and v.passed else 0.0, max_points=points(c),
                          judge="pass" if v and v.passed else "fail", kernel=kernel,
                          message=v.message if v else "no verdict", kind=v.kind if v else "missing",
                          detail=v.detail if v else "")
        if v and not v.passed and kernel == "pass" and v.visible_failed:
            cell.disagreement = TAMPER_FLAG
        cells[gid] = cell
    bad = [g for g, c in cells.items() if c.disagreement]
    if bad and TAMPER_FLAG not in flags:
        # The judge re-runs the visible example after the whole notebook: honest code whose result
        # depends on earlier calls (state kept between calls) can also disagree. Say so.
        flags.append(f"{TAMPER_FLAG} ({', '.join(bad)}; or the code's result depends on earlier calls)")
    return Report(chapter=chapter, student=student, seed=seed,
                  score=sum(c.points for c in cells.values()), max_score=sum(c.max_points for c in cells.values()),
                  cells=cells, flags=flags, events=clean_lines(result.events), sandbox=result.sandbox,
                  seconds=round(result.seconds, 2), restarts=result.restarts,
                  reference_seconds=round(result.reference_seconds, 2),
                  phases={k: round(v, 2) for k, v in result.phases.items()},
                  peak_memory_gib=round(result.peak_memory / 2 ** 30, 2),
                  # the grading process that ran the submission and read its results (grade-class's worker phase;
                  # this process when a plain nbgrader autograde ran it here)
                  judge_peak_mib=round((result.judge_peak_memory or
                                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) / 2 ** 20, 1),
                  graded_at=time.strftime("%Y-%m-%d %H:%M:%S"))


def report_path(root: Path, chapter: str, student: str) -> Path:
    d = paths.judge_dir(root) / "reports" / chapter
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{student}.json"


class JudgeExecute(NbGraderPreprocessor):
    """nbgrader preprocessor: execute in a sandbox, probe, and judge outside the kernel (replaces ``Execute``)."""

    seed = Integer(0, help="a fixed key for the per-student seeds (tests); 0: the installation's secret").tag(config=True)
    threads = Integer(0, help="CPU threads per worker (0: torch's default)").tag(config=True)
    require_sandbox = Bool(False, help="refuse to grade where bubblewrap is unavailable").tag(config=True)
    course_root = Unicode("", help="course folder (default: the working directory)").tag(config=True)
    precomputed = Unicode("", help="folder of the runs grade-class's workers saved").tag(config=True)
    references_file = Unicode("", help="reference results computed beforehand, for every seed").tag(config=True)

    def preprocess(self, nb, resources):
        from course.grading.run.worker import run_submission

        root = Path(self.course_root or os.getcwd()).resolve()
        info = resources["nbgrader"]
        chapter, student = info["assignment"], info["student"]
        limits = course_limits(config=self.config)
        cap_memory(limits.judge_memory_bytes)
        if self.require_sandbox and detect().degraded:
            raise JudgeError(f"no sandbox available ({detect().why}) and --require-sandbox is set")
        seed = references.seed_for(root, chapter, student, self.seed or None)
        judge = load(chapter, root)
        check_coverage(judge, graded_ids(nb), chapter)
        result = None
        if self.precomputed:
            result = runs.load_run(Path(self.precomputed), chapter, student, nb, seed, limits)
        if result is None:
            files = Path(resources.get("metadata", {}).get("path") or ".")
            result = run_submission(nb, chapter, student, judge.codes(), seed, files=files, limits=limits,
                                    course_root=root, threads=self.threads or None)
        t0 = time.perf_counter()
        refs = None
        if self.references_file:
            refs = references.load_saved(Path(self.references_file)).get(seed)
        if refs is None:
            refs = references.compute(chapter, root, seed, limits, judge)
        result.reference_seconds = time.perf_counter() - t0
        verdicts = verdicts_for(judge, result, refs)
        out = result.notebook
        diagnoses = diagnose(chapter, root, out, verdicts, log=self.log.warning)
        rewrite_grade_cells(out, verdicts, result.kernel_status)
        report = report_for(chapter, student, out, result, verdicts, seed)
        report.diagnoses = diagnoses
        staged = runs.staging_notes(root, chapter, student)
        report.intake, report.repair = staged.get("intake", {}), staged.get("repair", {})
        report.flags += [f for f in staged.get("flags", []) if f not in report.flags]
        report.save(report_path(root, chapter, student))
        result.results.clear()
        result.raw.clear()
        resources["judge"] = {"report": report}
        self.log.info("judge: %s/%s scored %g/%g%s", student, chapter, report.score, report.max_score,
                      f" (flags: {one_line('; '.join(report.flags), 300)})" if report.flags else "")
        return out, resources


class JudgeRecord(NbGraderPreprocessor):
    """nbgrader preprocessor (after ``SaveAutoGrades``): write the judge's scores and messages into the gradebook."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry

        from course.grading.judge import diagnosis

        judged = resources.get("judge")
        if not judged:
            return nb, resources
        report: Report = judged["report"]
        info = resources["nbgrader"]
        notebook, assignment, student = info["notebook"], info["assignment"], info["student"]
        exercise = exercise_of(nb)
        comments: dict[str, list[str]] = {}
        with Gradebook(info["db_url"]) as gb:
            for gid, c in report.cells.items():
                grade = gb.find_grade(gid, notebook, assignment, student)
                grade.auto_score = c.points
                grade.needs_manual_grade = grade.manual_score is not None
                if gid in exercise:
                    line = f"{gid}: {'passed' if c.judge == 'pass' else 'FAILED'}"
                    if c.judge != "pass":
                        line += f" - {one_line(c.message.splitlines()[0] if c.message else '', 300)}"
                    comments.setdefault(exercise[gid], []).append(line)
            for sol, lines in comments.items():
                try:
                    comment = gb.find_comment(sol, notebook, assignment, student)
                except MissingEntry:
                    continue
                text = "Grader (outside the kernel):\n" + "\n".join(lines)
                if sol in report.diagnoses:
                    text += f"\n{diagnosis.PREFIX}{report.diagnoses[sol]['note']}"
                if report.flags:
                    text += "\nFlags: " + "; ".join(report.flags)
                comment.auto_comment = markdown_block(text)
            gb.db.commit()
        return nb, resources


# --- rendering: what the student controls is cleaned, what the instructor owns is put back -------------

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+\-]{0,99}\Z")
_NUMBER = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,3})?\Z")
_META_TEXT = re.compile(r"[A-Za-z0-9 _.+\-()/:,]{0,100}\Z")
_OUTPUT_TYPES = ("stream", "error", "display_data", "execute_result")
# Output data a page may show as it is: text and images that nbconvert's template escapes or embeds as data.
_PLAIN_DATA = ("text/plain", "text/latex", "application/json", "image/png", "image/jpeg")


def _positive_number(value) -> int | float | None:
    """``value`` as a plain positive number (an int, a float or a string of digits), or ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 < value <= 10 ** 6:
        return value
    if isinstance(value, float) and math.isfinite(value) and 0 < value <= 10 ** 6:
        return value
    if isinstance(value, str) and _NUMBER.match(value.strip()) and float(value) > 0:
        return float(value) if "." in value else int(value)
    return None


def _image_metadata(meta) -> dict:
    out: dict = {}
    if not isinstance(meta, dict):
        return out
    for key in ("width", "height"):
        number = _positive_number(meta.get(key))
        if number is not None:
            out[key] = number
    if meta.get("unconfined") is True:
        out["unconfined"] = True
    if isinstance(meta.get("alt"), str):
        out["alt"] = one_line(meta["alt"], 300)
    return out


def safe_output_metadata(meta) -> dict:
    """The part of an output's metadata that nbconvert's templates read, each value checked; the rest dropped.

    The classic template writes ``width`` and ``height`` into ``<img>`` unquoted (``width: "1 onerror=..."`` was
    an event handler), takes ``filenames`` as the image's address (a beacon, or any URL) and ``isolated`` as
    "put this HTML in a ``data:`` iframe". Kept: ``width``/``height`` as plain positive numbers, ``unconfined``
    as ``True``, ``alt`` as a printable line, at the top level and under ``image/png``/``image/jpeg``.
    """
    out = _image_metadata(meta)
    if isinstance(meta, dict):
        for mime in ("image/png", "image/jpeg"):
            sub = _image_metadata(meta.get(mime))
            if sub:
                out[mime] = sub
    return out


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10 ** 9 else None


def _plain_tree(value, depth: int = 0):
    """Notebook metadata (kernelspec, language_info) kept only where every string is a plain word."""
    if isinstance(value, dict) and depth < 3:
        return {k: v for k, v in ((k, _plain_tree(v, depth + 1)) for k, v in value.items()
                                  if isinstance(k, str) and _PLAIN.match(k)) if v is not None}
    if isinstance(value, str):
        return value if _META_TEXT.match(value) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def safe_output(output: dict) -> dict | None:
    """One code-cell output made safe to render, or ``None`` to drop it.

    Streams and errors are text (nbconvert escapes them). Display data keeps text, LaTeX, JSON, PNG and JPEG
    as they are; HTML is cleaned (:func:`course.grading.text.clean_html`); markdown is rendered and cleaned
    into HTML (nbconvert's template would render its links unchecked); JavaScript, SVG, widgets and every
    other type are dropped. Metadata: :func:`safe_output_metadata`.
    """
    if not isinstance(output, dict) or output.get("output_type") not in _OUTPUT_TYPES:
        return None
    kind = output["output_type"]
    if kind == "stream":
        text = output.get("text", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        return nbformat.v4.new_output("stream", name="stderr" if output.get("name") == "stderr" else "stdout", text=text)
    if kind == "error":
        tb = output.get("traceback")
        return nbformat.v4.new_output("error", ename=str(output.get("ename", "Error")),
                                      evalue=str(output.get("evalue", "")),
                                      traceback=[str(x) for x in tb] if isinstance(tb, list) else [])
    data = output.get("data") if isinstance(output.get("data"), dict) else {}
    kept: dict = {}
    for key, value in data.items():
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            value = "".join(value)
        if key in _PLAIN_DATA:
            kept[key] = value if key == "application/json" or isinstance(value, str) else str(value)
        elif key == "text/html" and isinstance(value, str):
            kept[key] = clean_html(value)
    if "text/html" not in kept and isinstance(data.get("text/markdown"), (str, list)):
        md = data["text/markdown"]
        kept["text/html"] = markdown_html("".join(md) if isinstance(md, list) else md)
    new = nbformat.v4.new_output(kind, data=kept, metadata=safe_output_metadata(output.get("metadata")))
    if kind == "execute_result":
        new["execution_count"] = _count(output.get("execution_count"))
    return new


class _Owned:
    """The release notebook's own markdown and raw cells (no solution cell), by id, by grade id and by text."""

    def __init__(self, release) -> None:
        self.by_id: dict[str, dict] = {}
        self.by_grade: dict[str, dict] = {}
        self.by_text: dict[str, dict] = {}
        for cell in release.get("cells", []):
            if not isinstance(cell, dict) or cell.get("cell_type") not in ("markdown", "raw"):
                continue
            meta = (cell.get("metadata") or {}).get("nbgrader") or {}
            if not isinstance(meta, dict) or meta.get("solution"):
                continue  # a student's answer cell: its text in the release is a stub, and the answer is theirs
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            entry = {"cell_type": cell["cell_type"], "source": src,
                     "attachments": cell.get("attachments") or {},
                     "metadata": {k: v for k, v in (cell.get("metadata") or {}).items()
                                  if k in ("format", "raw_mimetype")}}
            if isinstance(cell.get("id"), str):
                self.by_id.setdefault(cell["id"], entry)
            if meta.get("locked") and isinstance(meta.get("grade_id"), str):
                self.by_grade.setdefault(meta["grade_id"], entry)
            self.by_text.setdefault(src, entry)

    def match(self, cell) -> dict | None:
        """The release's version of ``cell`` if the instructor owns it (same id, locked grade id, or same text)."""
        meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
        meta = meta if isinstance(meta, dict) else {}
        if meta.get("solution"):
            return None
        if isinstance(cell.get("id"), str) and cell["id"] in self.by_id:
            return self.by_id[cell["id"]]
        if meta.get("locked") and isinstance(meta.get("grade_id"), str) and meta["grade_id"] in self.by_grade:
            return self.by_grade[meta["grade_id"]]
        src = cell.get("source", "")
        return self.by_text.get("".join(src) if isinstance(src, list) else str(src))


_RELEASES: dict[tuple, _Owned] = {}


def _release_cells(path: Path) -> _Owned | None:
    try:
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size)
        if key not in _RELEASES:
            if len(_RELEASES) > 32:
                _RELEASES.clear()
            _RELEASES[key] = _Owned(json.loads(path.read_text()))
        return _RELEASES[key]
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return None


class SafeNotebook(Preprocessor):
    """Make a notebook safe to render: no active content from the student, the instructor's text as written.

    Cells the instructor owns (the release's markdown and raw cells, matched by cell id, by the grade id of a
    locked cell, or by their exact text; never a solution cell) are put back from the release notebook and
    rendered as written: statements keep their ``->`` and hints their ``<details>``. Everything else a student
    controls is cleaned: their markdown is rendered and cleaned into one inert HTML block
    (:func:`course.grading.text.markdown_cell_html`: no ``javascript:``/``data:``/``vbscript:`` link in any
    markdown form, no event handler, every attribute quoted), every output by :func:`safe_output`, execution
    counts must be integers, a grade id that is not a plain name is dropped, and outputs are capped in bytes.
    """

    # nbgrader registers its preprocessors without enabling them, and nbconvert's default is off.
    enabled = Bool(True).tag(config=True)
    cell_output_bytes = Integer(Limits.cell_output_bytes, help="bytes kept per cell's outputs").tag(config=True)
    notebook_output_bytes = Integer(Limits.notebook_output_bytes, help="bytes kept per notebook's outputs").tag(config=True)

    def _config_value(self, section: str, key: str):
        cfg = self.config
        return cfg[section].get(key) if section in cfg and isinstance(cfg[section], dict) else None

    def release_path(self, resources) -> Path | None:
        """The release notebook this notebook was made from (autograde, generate_feedback, Formgrader), or ``None``."""
        resources = resources if isinstance(resources, dict) else {}
        info = resources.get("nbgrader") if isinstance(resources.get("nbgrader"), dict) else {}
        meta = resources.get("metadata") if isinstance(resources.get("metadata"), dict) else {}
        folder = meta.get("path")
        assignment = info.get("assignment") or resources.get("assignment_id") or (Path(folder).name if folder else None)
        notebook = info.get("notebook") or resources.get("notebook_id") or meta.get("name")
        if not (isinstance(assignment, str) and _PLAIN.match(assignment) and isinstance(notebook, str)
                and _PLAIN.match(notebook)):
            return None
        release = self._config_value("CourseDirectory", "release_directory") or "release"
        if not (isinstance(release, str) and _PLAIN.match(release)):
            release = "release"
        roots = [self._config_value("CourseDirectory", "root"), self._config_value("JudgeExecute", "course_root")]
        if folder:  # <root>/autograded/<student>/<assignment>, or another folder a few levels below the course
            roots += [str(p) for p in list(Path(folder).resolve().parents)[:3]]
        for root in roots:
            if isinstance(root, str) and root:
                candidate = Path(root) / release / assignment / f"{notebook}.ipynb"
                if candidate.is_file():
                    return candidate
        return None

    def preprocess(self, nb, resources):
        path = self.release_path(resources)
        owned = _release_cells(path) if path else None
        meta = {k: _plain_tree(nb.metadata[k]) for k in ("kernelspec", "language_info") if k in nb.metadata}
        nb.metadata = nbformat.from_dict(json.loads(json.dumps({k: v for k, v in meta.items() if v})))
        total = 0
        for cell in nb.cells:
            self._clean_cell_metadata(cell)
            if cell.cell_type in ("markdown", "raw"):
                mine = owned.match(cell) if owned else None
                if mine is not None:  # the instructor's: exactly as in the release
                    cell.cell_type = mine["cell_type"]
                    cell.source = mine["source"]
                    cell.pop("attachments", None)
                    if mine["attachments"]:
                        cell.attachments = nbformat.from_dict(json.loads(json.dumps(mine["attachments"])))
                    cell.metadata.pop("format", None)
                    cell.metadata.pop("raw_mimetype", None)
                    cell.metadata.update(json.loads(json.dumps(mine["metadata"])))
                    continue
                src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
                attachments = cell.get("attachments") if isinstance(cell.get("attachments"), dict) else {}
                if cell.cell_type == "markdown":
                    cell.source = markdown_cell_html(src, attachments)
                else:
                    cell.source = clean_html(src)
                    cell.metadata.pop("format", None)
                    cell.metadata.pop("raw_mimetype", None)
                cell.pop("attachments", None)  # markdown_cell_html embedded the PNG/JPEG ones it uses
                continue
            if cell.cell_type != "code":
                continue
            cell.execution_count = _count(cell.get("execution_count"))
            outputs = cell.get("outputs", [])
            outputs = [o for o in (safe_output(o) for o in (outputs if isinstance(outputs, list) else [])) if o]
            kept, used = [], 0
            for o in outputs:
                size = len(json.dumps(o, default=str))
                room = min(self.cell_output_bytes - used, self.notebook_output_bytes - total)
                if size > room:
                    if o.get("output_type") == "stream" and room > 200:
                        o["text"] = str(o.get("text", ""))[:room - 200]
                        kept.append(o)
                    kept.append(nbformat.v4.new_output("stream", name="stderr",
                                                       text="[output cut: over the grader's cap]\n"))
                    used += room
                    total += room
                    break
                kept.append(o)
                used += size
                total += size
            cell.outputs = kept
        return nb, resources

    @staticmethod
    def _clean_cell_metadata(cell) -> None:
        """Cell metadata that a template writes into the page unescaped, or hands to a lexer, checked."""
        meta = cell.get("metadata")
        if not isinstance(meta, dict):
            cell.metadata = nbformat.NotebookNode()
            return
        grading = meta.get("nbgrader")
        # Formgrader writes the grade id into id="..." unescaped; a real one is a plain name.
        if grading is not None and not (isinstance(grading, dict) and (grading.get("grade_id") is None or (
                isinstance(grading.get("grade_id"), str) and _PLAIN.match(grading["grade_id"])))):
            meta.pop("nbgrader", None)
        meta.pop("magics_language", None)
        for key in ("alt", "attachments"):
            meta.pop(key, None)
        if "tags" in meta and not (isinstance(meta["tags"], list) and all(
                isinstance(t, str) and _PLAIN.match(t) for t in meta["tags"])):
            meta.pop("tags", None)
