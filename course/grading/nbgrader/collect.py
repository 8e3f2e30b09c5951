"""``nbgrader collect`` through the intake: :class:`SafeCollect` (``c.ExchangeFactory.collect`` in
``nbgrader_config.py``, set by :func:`course.grading.nbgrader.wrapper.install`).

Every file is taken through :func:`course.grading.intake.files.copy_submission`; on top of it, the exchange's own
traps: a submission planted in another user's name or as a link, a name nbgrader cannot parse, a
``timestamp.txt`` that is not a date, an exchange that does not exist yet.
"""
from __future__ import annotations

import datetime
import json
import os
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Bool

from course.grading.config import Limits
from course.grading.intake.files import IntakeReport, copy_submission, valid_student_id
from course.grading.paths import intake_log
from course.grading.text import one_line

_SKIPPED = "\0skipped:"  # the group of an exchange entry whose name could not be read (never a student id)


class _LocalUsers:
    """``name in _LocalUsers(pwd)``: whether ``name`` is a user of this machine."""

    def __init__(self, pwd) -> None:
        self.pwd = pwd

    def __contains__(self, name: str) -> bool:
        try:
            self.pwd.getpwnam(name)
            return True
        except (KeyError, ValueError):
            return False


def _check_timestamp(src: Path, dest: Path, log) -> None:
    """Make the collected ``timestamp.txt`` the exchange entry's own date when the student's file is not one
    (nbgrader parses it at the next collect and at autograde, and stops on one it cannot read)."""
    from nbgrader.utils import parse_utc

    path = dest / "timestamp.txt"
    try:
        parse_utc(path.read_text(errors="replace").strip()[:100])
        return
    except Exception:  # noqa: BLE001 - missing, empty or not a date
        pass
    stamp = src.name.rsplit("+", 2)[-1]
    log.warning("intake: %s: timestamp.txt is not a date: replaced by the exchange's %r", one_line(dest, 120),
                one_line(stamp, 60))
    if path.is_symlink() or path.exists():
        path.unlink()
    path.write_text(stamp)


def _limits(root: Path) -> Limits:
    from course.grading.config import limits

    try:
        return limits(root)
    except Exception:  # noqa: BLE001 - a broken config must not open the intake
        return Limits()


def _owner_problem(src: Path, student: str) -> str:
    """Why a submission folder must not be taken as ``student``'s (it belongs to another local user), or ""."""
    try:
        import pwd
    except ImportError:  # pragma: no cover - not on Windows
        return ""
    try:
        st = os.lstat(src)
    except OSError as err:
        return f"the submission folder cannot be read ({err.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return f"{student}'s submission in the exchange is a symbolic link: not collected"
    try:
        expected = pwd.getpwnam(student).pw_uid
    except (KeyError, ValueError):
        return ""  # not a local user (the ids of a hub with another authenticator): nothing to compare
    if st.st_uid != expected:
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = f"uid {st.st_uid}"
        return (f"a submission in the exchange claims to be {student}'s but belongs to {owner}: "
                f"not collected (an attempt to submit as someone else?)")
    return ""


class SafeCollect(ExchangeCollect):
    """``nbgrader collect`` through the intake: no link followed, no special file opened, ids checked.

    Configure with ``c.ExchangeFactory.collect = "course.grading.nbgrader.collect.SafeCollect"``.
    A resubmission replaces the collected one (``update`` is on: ``--ExchangeCollect.update=False`` keeps the
    first); a missing exchange is made, and a missing ``inbound/`` is explained (issue 27).
    """

    update = Bool(True, help="Collect a newer submission over the one collected before (nbgrader's --update)."
                  ).tag(config=True)

    def ensure_root(self):
        # nbgrader says "Unwritable directory, please contact your instructor" for an exchange that does not
        # exist yet; the instructor is the one reading it.
        root = Path(self.root)
        if not root.exists():
            try:
                root.mkdir(parents=True)
            except OSError as err:
                self.fail(f"The exchange {root} does not exist and could not be made ({err.strerror}): make it "
                          f"(mkdir -p {root}), or set COURSE_EXCHANGE to the class's exchange")
            self.log.warning("intake: made the exchange %s (empty: nothing was released or submitted there)", root)
        elif not os.access(root, os.W_OK | os.X_OK):
            self.fail(f"The exchange {root} is not writable by this user: give yourself write access to it "
                      f"(chmod 1777 {root} for a shared one), or set COURSE_EXCHANGE to the class's exchange")
        super().ensure_root()

    def _path_to_record(self, path):
        # nbgrader stops the whole collect on one name it cannot parse: skip that one, say so, go on.
        filename = os.path.split(path)[1]
        try:
            return super()._path_to_record(path)
        except Exception as err:  # noqa: BLE001 - self.fail() raises, parse_utc raises ValueError and others
            self.log.error("intake: skipped %r in the exchange: its name is not <student>+<assignment>+<date> "
                           "(%s)", one_line(filename, 120), one_line(err, 120))
            return {"username": _SKIPPED + filename, "filename": filename, "skipped": True,
                    "timestamp": datetime.datetime(1970, 1, 2)}

    def init_src(self):
        inbound = Path(self.root) / (self.coursedir.course_id or "") / "inbound"
        if self.coursedir.course_id and not inbound.is_dir():
            self.fail(f"Nothing to collect: {inbound} does not exist, so nothing was released into or "
                      f"submitted to this exchange. Release first (nbgrader release_assignment "
                      f"{self.coursedir.assignment_id}, or make instructor / make lab, which release every "
                      f"chapter there); students then Fetch and Submit in the Assignments tab. A lab on this "
                      f"machine uses this exchange when it runs as the same user or with the same "
                      f"COURSE_EXCHANGE.")
        super().init_src()
        known = self._known_students()
        kept = []
        for rec in self.src_records:
            name = rec["username"]
            if rec.get("skipped"):
                continue  # already said, in _path_to_record
            if not valid_student_id(name):
                self.log.error("intake: refused a submission whose student id is not a plain name: %r",
                               one_line(name, 80))
            elif known is not None and name not in known[0]:
                self.log.error("intake: skipped the submission of %r: %s", one_line(name, 80), known[1])
            else:
                kept.append(rec)
        self.src_records = kept

    def _known_students(self) -> tuple[set[str], str] | None:
        """The ids that may be collected, and why others are not; ``None``: any plain id.

        The gradebook's student list when it has one; otherwise, while nbgrader's owner check is on (its
        default: students submit as Unix users of this machine, as on the course's hub), the local users.
        ``CollectApp.check_owner = False`` is the switch for a class whose ids are not Unix users.
        """
        from nbgrader.api import Gradebook

        try:
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                listed = {s.id for s in gb.students}
        except Exception:  # noqa: BLE001 - no gradebook yet: nothing listed
            listed = set()
        if listed:
            return listed, "not a student in the gradebook (nbgrader db student add, or Formgrader)"
        if getattr(self, "check_owner", True):
            try:
                import pwd
            except ImportError:  # pragma: no cover - not on Windows
                return None
            return _LocalUsers(pwd), ("not a user of this machine (students submit as their own Unix users; "
                                      "set CollectApp.check_owner = False for a class whose ids are not)")
        return None

    def _sort_by_timestamp(self, records):
        # The latest submission that really is the student's wins; one planted by another user (or a
        # link) sorts after every genuine one, so it can neither replace nor hide the student's own work.
        def genuine(rec):
            if rec.get("skipped"):
                return False
            problem = _owner_problem(Path(self.inbound_path) / rec["filename"], rec["username"])
            if problem:
                self.log.error("intake: %s", problem)
            return not problem
        return sorted(records, key=lambda r: (not genuine(r), -r["timestamp"].timestamp()))

    def copy_files(self):
        # One record at a time: nbgrader fails the whole collect on one student's unreadable timestamp.txt
        # (an earlier copy of their own file); that student is skipped, with a message, and the class goes on.
        records = list(self.src_records)
        if len(records) <= 1:
            return self._copy_one(records)
        try:
            for rec in records:
                self._copy_one([rec])
        finally:
            self.src_records = records

    def _copy_one(self, records):
        self.src_records = records
        try:
            super().copy_files()
        except Exception as err:  # noqa: BLE001 - nbgrader's self.fail() and any error of one submission
            who = one_line(records[0]["username"], 80) if records else "?"
            self.log.error("intake: skipped the submission of %r: %s", who, one_line(err, 200))

    def do_copy(self, src, dest, log=None):
        student = Path(dest).parent.name
        root = Path(self.coursedir.root)
        chapter = self.coursedir.assignment_id
        problem = _owner_problem(Path(src), student)
        if problem:
            self.log.error("intake: %s", problem)
            report = IntakeReport(refused=problem)
        else:
            report = copy_submission(Path(src), Path(dest), _limits(root), notebook=f"{chapter}.ipynb")
            for line in report.flags():
                self.log.warning("intake: %s/%s: %s", student, chapter, line)
            _check_timestamp(Path(src), Path(dest), self.log)
        intake_log(root, chapter, student).write_text(json.dumps(report.to_json()))
