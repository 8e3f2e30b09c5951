"""A notebook made safe to render for a human, last when grading and inside every ``HTMLExporter``:

:class:`SafeNotebook` makes a notebook safe to render for a human. What
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
import re
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Integer

from course.grading.config import Limits
from course.grading.text import clean_html, markdown_cell_html, markdown_html, one_line


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
