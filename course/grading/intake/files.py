"""The intake: the one place a submission's files pass through before anything on the instructor's side copies them.

A submission folder is data from an adversary. :func:`copy_submission` copies
one into a fresh folder of the instructor's and returns an
:class:`IntakeReport` of what it did. It

* never follows a symbolic link (every open is ``O_NOFOLLOW``, relative to an
  already-opened folder, so a link swapped in mid-copy is not followed either),
  and never opens a FIFO, a device or a socket: it looks at each entry with
  ``lstat`` and opens only regular files, non-blocking, checking again with
  ``fstat`` on the opened descriptor;
* refuses a submitted notebook that is not a regular file (a symbolic link
  to a classmate's notebook, a device): that submission is graded as
  unanswered, and says why. (A hard link is copied as the file it is: it can
  only be made to a file its maker could already read, so it reveals nothing
  that a plain copy would not.);
* drops every other link, special file, hidden entry and file with an
  unprintable name, and caps the number of files, the bytes per file, the
  bytes in all and the folder depth (:class:`~course.grading.config.Limits`);
* drops every file a browser would run (:func:`active_file`: HTML, SVG, XML,
  XSL, JavaScript, MHTML, Flash, by any of its extensions or by the type the
  server would send): Formgrader's ``SubmissionFilesHandler`` serves
  ``autograded/<student>/<chapter>/`` from the Jupyter origin, Jupyter's
  ``/files/`` serves ``submitted/`` and ``feedback/`` (where
  ``generate_feedback`` copies the graded folder's files), so one relative link
  from the student's notebook to their own ``appendix.html`` would run their
  script as the instructor. Dropping beats renaming: nothing of the student's
  that a browser would run exists anywhere under the course, and the
  report says which file went ("active files dropped" in the class table);
* never changes the submitted files (it only reads them).

Everything dropped or refused is listed in the report, which the student's
report, feedback and the class table show.

The same rules cover every way in: ``grade-class`` and ``autograde`` stage each
``submitted/<student>/<chapter>/`` through it; ``nbgrader collect`` uses
:class:`course.grading.nbgrader.collect.SafeCollect` (``c.ExchangeFactory.collect``),
which also refuses student ids that are not plain names and submissions whose
folder is owned by another local user; an LMS zip is checked by
:func:`check_zip` before ``nbgrader zip_collect`` unpacks it; and a plain
``nbgrader autograde`` (Formgrader's button) refuses a submission that
:func:`scan` finds hostile, before nbgrader copies anything
(:mod:`course.grading.nbgrader.wrapper`).
"""
from __future__ import annotations

import itertools
import json
import mimetypes
import os
import re
import shutil
import stat
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course.grading.config import Limits
from course.grading.paths import intake_log_path
from course.grading.text import one_line

_STUDENT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,63}")
_NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f/\\]{1,200}")
# Extensions of files a browser runs or renders with script when a server sends them; and the types that
# mimetypes (what Tornado's StaticFileHandler sends) gives them on this machine, which may know more.
_ACTIVE_SUFFIXES = frozenset({"htm", "html", "xhtml", "xht", "shtml", "mht", "mhtml", "svg", "svgz", "xml", "xsl",
                              "xslt", "xsd", "rdf", "js", "mjs", "cjs", "jsx", "swf", "hta", "htc", "vbs", "wsf"})
_ACTIVE_NOTE = "a web page, SVG, XML or script file (a browser would run it): not copied"
_CHUNK = 1 << 20


def active_file(name: str) -> bool:
    """Whether a browser would run ``name`` (or render it with script) if the Jupyter server sent it."""
    lower = name.lower()
    if any(part.strip() in _ACTIVE_SUFFIXES for part in lower.split(".")[1:]):
        return True
    kind, _ = mimetypes.guess_type(lower, strict=False)
    return bool(kind) and (kind in ("text/html", "message/rfc822", "application/x-shockwave-flash")
                           or kind.startswith("multipart/") or any(k in kind for k in ("xml", "script", "html")))


def valid_student_id(student: str) -> bool:
    """Whether ``student`` is a plain id (letters, digits, ``_.@+-``; at most 64): safe as a folder name and in HTML."""
    return bool(_STUDENT_ID.fullmatch(student or "")) and student not in (".", "..")


@dataclass
class IntakeReport:
    """What the intake did with one submission folder."""

    files: int = 0
    bytes: int = 0
    folders: int = 0
    entries: int = 0
    dropped: list[str] = field(default_factory=list)   # entries not copied, and why
    refused: str = ""                                  # why the notebook itself was not taken ("" if it was)

    def note(self, why: str) -> None:
        if why not in self.dropped and len(self.dropped) < 50:
            self.dropped.append(why)

    @property
    def clean(self) -> bool:
        return not self.dropped and not self.refused

    def flags(self) -> list[str]:
        """Lines for the student's report."""
        out = []
        if self.refused:
            out.append(f"intake refused the notebook: {self.refused}")
        if self.dropped:
            out.append("intake dropped: " + "; ".join(self.dropped[:8])
                       + (f"; and {len(self.dropped) - 8} more" if len(self.dropped) > 8 else ""))
        return out

    def words(self) -> list[str]:
        """Short flags for the class table."""
        text = " ".join(self.dropped)
        out = []
        if self.refused:
            out.append("notebook refused")
        if "symbolic link" in text:
            out.append("links dropped")
        if any(k in text for k in ("a named pipe", "a socket", "a character device", "a block device")):
            out.append("special files dropped")
        if "cap" in text:
            out.append("over the intake caps")
        if _ACTIVE_NOTE in text:
            out.append("active files dropped")
        return out

    def merge(self, other: "IntakeReport") -> "IntakeReport":
        for d in other.dropped:
            self.note(d)
        self.refused = self.refused or other.refused
        return self

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "IntakeReport":
        return cls(files=int(d.get("files", 0)), bytes=int(d.get("bytes", 0)), folders=int(d.get("folders", 0)),
                   entries=int(d.get("entries", 0)),
                   dropped=[one_line(x) for x in d.get("dropped", [])][:50], refused=one_line(d.get("refused", "")))


def _shown(name: str) -> str:
    return one_line(name, 80)


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return what
    return "not a regular file"


class _Walk:
    """One pass over a submission folder, copying (``dest``) or only looking (``dest is None``)."""

    def __init__(self, limits: Limits, notebook: str | None, dest: Path | None) -> None:
        self.limits, self.notebook, self.dest = limits, notebook, dest
        self.report = IntakeReport()

    def run(self, src: Path) -> IntakeReport:
        try:
            top = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as err:
            kind = "a symbolic link" if os.path.islink(src) else "not a folder"
            self.report.refused = f"the submission folder is {kind} ({err.strerror}): nothing was taken"
            return self.report
        try:
            self._folder(top, self.dest, "", 0)
        finally:
            os.close(top)
        return self.report

    def _folder(self, fd: int, dest: Path | None, rel: str, depth: int) -> None:
        room = self.limits.intake_entries - self.report.entries
        try:
            with os.scandir(fd) as it:  # never more than the cap's worth listed, however large the folder
                entries = sorted(itertools.islice(it, max(room, 0) + 1), key=lambda e: e.name)
        except OSError as err:
            self.report.note(f"{_shown(rel or '.')}: could not be listed ({err.strerror})")
            return
        for entry in entries:
            if self.report.entries >= self.limits.intake_entries:
                self.report.note(f"more than the cap of {self.limits.intake_entries} entries (files, folders and "
                                 f"links, taken or not): the rest was not looked at")
                return
            self.report.entries += 1
            name = entry.name
            path = f"{rel}{name}"
            if name.startswith("."):
                continue  # checkpoints, caches, dotfiles: never part of a submission
            if not _NAME.fullmatch(name) or one_line(name, 200) != name:
                self.report.note(f"a file with an unprintable name ({_shown(name)!r}) was not copied")
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            top_notebook = depth == 0 and self.notebook is not None and name == self.notebook
            if stat.S_ISDIR(st.st_mode):
                if top_notebook:
                    self.report.refused = f"{_shown(name)} is a folder, not the notebook file itself: not graded"
                    continue
                if depth + 1 > self.limits.intake_depth:
                    self.report.note(f"{_shown(path)}/: deeper than the cap of {self.limits.intake_depth} folders")
                    continue
                if self.report.folders >= self.limits.intake_folders:
                    self.report.note(f"more than the cap of {self.limits.intake_folders} folders: the rest was not "
                                     f"copied")
                    continue
                self.report.folders += 1
                try:
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                except OSError:
                    self.report.note(f"{_shown(path)}/: could not be opened")
                    continue
                try:
                    target = None
                    if dest is not None:
                        target = dest / name
                        os.mkdir(target, 0o755)
                    self._folder(sub, target, path + "/", depth + 1)
                finally:
                    os.close(sub)
                continue
            if not stat.S_ISREG(st.st_mode):
                what = _kind(st.st_mode)
                if top_notebook:
                    self.report.refused = f"{_shown(name)} is {what}, not the notebook file itself: not graded"
                else:
                    self.report.note(f"{_shown(path)} is {what}: not copied (not a regular file)")
                continue
            if not top_notebook and active_file(name):
                self.report.note(f"{_shown(path)}: {_ACTIVE_NOTE}")
                continue
            if self.report.files >= self.limits.intake_files:
                self.report.note(f"more than the cap of {self.limits.intake_files} files: the rest was not copied")
                continue
            if st.st_size > self.limits.intake_file_bytes:
                self.report.note(f"{_shown(path)} is {st.st_size / 2**20:.0f} MiB, over the cap of "
                                 f"{self.limits.intake_file_bytes / 2**20:.0f} MiB per file: not copied")
                if top_notebook:
                    self.report.refused = f"{_shown(name)} is larger than the cap per file: not graded"
                continue
            if self.report.bytes + st.st_size > self.limits.intake_bytes:
                self.report.note(f"{_shown(path)}: over the cap of {self.limits.intake_bytes / 2**20:.0f} MiB "
                                 f"for the whole submission: not copied")
                if top_notebook:
                    self.report.refused = f"{_shown(name)}: the submission is over its size cap: not graded"
                continue
            copied = self._file(fd, name, st, None if dest is None else dest / name, path)
            if copied is None and top_notebook and not self.report.refused:
                self.report.refused = f"{_shown(name)} could not be read: not graded"
            elif copied is not None:
                self.report.files += 1
                self.report.bytes += copied

    def _file(self, fd: int, name: str, st: os.stat_result, target: Path | None, path: str) -> int | None:
        try:
            src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError as err:
            self.report.note(f"{_shown(path)}: could not be opened ({err.strerror})")
            return None
        try:
            now = os.fstat(src)
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                self.report.note(f"{_shown(path)} changed while it was read: not copied")
                return None
            if target is None:
                return now.st_size
            cap = min(self.limits.intake_file_bytes, self.limits.intake_bytes - self.report.bytes)
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            total = 0
            try:
                while True:
                    chunk = os.read(src, _CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > cap:  # the file grew while it was read
                        break
                    os.write(out, chunk)
            finally:
                os.close(out)
            if total > cap:
                os.unlink(target)
                self.report.note(f"{_shown(path)} grew past its cap while it was read: not copied")
                return None
            return total
        finally:
            os.close(src)


def copy_submission(src: Path, dest: Path, limits: Limits | None = None, notebook: str | None = None) -> IntakeReport:
    """Copy the submission folder ``src`` into ``dest`` (created; replaced if it exists) by the rules above.

    ``notebook``: the file name of the submitted notebook at the top of ``src``; if it is not a regular
    file of its own, it is not copied and ``report.refused`` says why.
    """
    dest = Path(dest)
    if dest.is_symlink():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True, mode=0o755)
    return _Walk(limits or Limits(), notebook, dest).run(Path(src))


def scan(src: Path, limits: Limits | None = None, notebook: str | None = None) -> IntakeReport:
    """Look at a submission folder by the same rules without copying anything; return what would be dropped."""
    return _Walk(limits or Limits(), notebook, None).run(Path(src))


def students(submitted: Path, chapter: str) -> tuple[list[str], dict[str, str]]:
    """The student folders under ``submitted/`` that hold ``chapter``: (valid ids, {refused name: why}).

    A student folder or chapter folder that is a symbolic link, or a student id that is not a plain name,
    is refused (never followed).
    """
    ok, refused = [], {}
    try:
        entries = sorted(os.scandir(submitted), key=lambda e: e.name)
    except OSError:
        return [], {}
    for e in entries:
        if e.name.startswith("."):
            continue
        try:
            st = os.stat(Path(submitted) / e.name / chapter, follow_symlinks=False)
        except OSError:
            continue
        if not valid_student_id(e.name):
            refused[one_line(e.name, 80)] = "the student id is not a plain name (letters, digits, _.@+-)"
        elif e.is_symlink() or not stat.S_ISDIR(st.st_mode):
            refused[e.name] = "the submission folder is a symbolic link or not a folder"
        else:
            ok.append(e.name)
    return ok, refused


# --- the exchange -----------------------------------------------------------------------------------

def read_intake_log(root: Path, chapter: str, student: str) -> IntakeReport | None:
    path = intake_log_path(root, chapter, student)
    try:
        return IntakeReport.from_json(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


# --- LMS archives -----------------------------------------------------------------------------------

def check_zip(path: Path, limits: Limits | None = None) -> list[str]:
    """Problems that make an LMS archive unsafe to unpack (empty list: safe): links, bombs, escaping paths."""
    limits = limits or Limits()
    problems = []
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (OSError, zipfile.BadZipFile) as err:
        return [f"not a readable zip archive ({one_line(err, 120)})"]
    if len(infos) > 20 * limits.intake_files:
        problems.append(f"{len(infos)} entries, over the cap of {20 * limits.intake_files}")
    total = 0
    for info in infos:
        name = info.filename
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            problems.append(f"{_shown(name)} is a symbolic link")
        if name.startswith("/") or ".." in Path(name).parts:
            problems.append(f"{_shown(name)} points outside the archive")
        if info.file_size > limits.intake_file_bytes:
            problems.append(f"{_shown(name)} unpacks to {info.file_size / 2**20:.0f} MiB")
        if info.compress_size and info.file_size / info.compress_size > 200:
            problems.append(f"{_shown(name)} expands {info.file_size // max(1, info.compress_size)}x (a zip bomb?)")
        total += info.file_size
    if total > 20 * limits.intake_bytes:
        problems.append(f"the archive unpacks to {total / 2**20:.0f} MiB in all")
    return problems[:20]
