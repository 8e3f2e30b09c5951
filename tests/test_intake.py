"""The intake never follows a link, never opens a special file, caps what it takes, and leaves the submission as it was."""
from __future__ import annotations

import hashlib
import os
import socket
import stat
import zipfile
from pathlib import Path

import pytest

from course.grading.intake import files as intake
from course.grading.nbgrader import collect
from course.grading.config import Limits


def tree_hash(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p.relative_to(root))] = f"mode {stat.S_IFMT(st.st_mode):o}" + (
                f" -> {os.readlink(p)}" if stat.S_ISLNK(st.st_mode) else "")
    return out


@pytest.fixture
def secret(tmp_path):
    """Files of the instructor's and a classmate's that a submission must never deliver."""
    d = tmp_path / "course"
    (d / "source" / "ch").mkdir(parents=True)
    (d / "source" / "ch" / "judge.py").write_text("HIDDEN TESTS\n")
    (d / ".judge").mkdir()
    (d / ".judge" / "secret").write_bytes(b"S" * 32)
    (d / "classmate").mkdir()
    (d / "classmate" / "ch.ipynb").write_text('{"cells": ["full marks"]}')
    return d


def hostile(tmp_path: Path, secret: Path) -> Path:
    sub = tmp_path / "submitted" / "mallory" / "ch"
    (sub / "data").mkdir(parents=True)
    (sub / "data" / "ok.txt").write_text("my data")
    (sub / "notes.txt").write_text("notes")
    os.symlink(secret / "source" / "ch" / "judge.py", sub / "judge.py")          # absolute link to a file
    os.symlink("../../../../course/.judge/secret", sub / "seed")                 # relative link
    os.symlink(secret / "source", sub / "x")                                     # linked folder
    os.symlink("/dev/zero", sub / "data.bin")                                    # a device, through a link
    os.symlink(sub / "nowhere", sub / "dangling")
    os.mkfifo(sub / "data" / "pipe")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sub / "sock"))
    s.close()
    os.link(sub / "notes.txt", sub / "notes-again.txt")                           # a hard link: copied as a file
    (sub / "bad\x1b]0;pwned\x07name.txt").write_text("x")                        # an escape sequence in a name
    (sub / ".hidden").write_text("x")
    return sub


def test_copy_takes_only_regular_files_and_says_what_it_dropped(tmp_path, secret):
    sub = hostile(tmp_path, secret)
    os.symlink(secret / "classmate" / "ch.ipynb", sub / "ch.ipynb")  # the notebook: a classmate's
    before = tree_hash(sub)
    dest = tmp_path / "staged"
    report = intake.copy_submission(sub, dest, notebook="ch.ipynb")
    assert tree_hash(sub) == before, "the submitted files must never change"
    copied = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    assert copied == ["data", "data/ok.txt", "notes-again.txt", "notes.txt"], copied
    for p in dest.rglob("*"):
        assert not p.is_symlink() and (p.is_dir() or p.is_file())
    text = " ".join(report.dropped)
    for name in ("judge.py", "seed", "x", "data.bin", "dangling", "data/pipe", "sock"):
        assert name in text, f"{name} not reported: {report.dropped}"
    assert "a named pipe" in text and "a socket" in text and "symbolic link" in text
    assert "unprintable name" in text and "\x1b" not in text and "\x07" not in text
    assert "symbolic link" in report.refused and "not graded" in report.refused
    assert set(report.words()) >= {"notebook refused", "links dropped", "special files dropped"}
    blob = b"".join(p.read_bytes() for p in dest.rglob("*") if p.is_file())
    assert b"HIDDEN" not in blob and b"SSSS" not in blob and b"full marks" not in blob


def test_scan_sees_what_copy_would_drop_without_writing(tmp_path, secret):
    sub = hostile(tmp_path, secret)
    (sub / "ch.ipynb").write_text("{}")
    report = intake.scan(sub, notebook="ch.ipynb")
    assert not report.refused and len(report.dropped) >= 7 and report.files == 4


def test_a_linked_submission_folder_is_refused(tmp_path, secret):
    os.symlink(secret / "classmate", tmp_path / "linked")
    report = intake.copy_submission(tmp_path / "linked", tmp_path / "out")
    assert "symbolic link" in report.refused and list((tmp_path / "out").iterdir()) == []


def test_caps(tmp_path):
    sub = tmp_path / "sub"
    deep = sub
    for i in range(6):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("x")
    for i in range(12):
        (sub / f"f{i:02d}.txt").write_bytes(b"x" * 100)
    (sub / "big.bin").write_bytes(b"x" * 5000)
    limits = Limits(intake_files=10, intake_file_bytes=4000, intake_bytes=900, intake_depth=3)
    report = intake.copy_submission(sub, tmp_path / "out", limits)
    text = " ".join(report.dropped)
    assert "deeper than the cap of 3" in text and "per file" in text and "whole submission" in text
    assert report.bytes <= 900 and report.files <= 10
    assert "over the intake caps" in report.words()


def test_student_ids():
    for ok in ("alice", "bob.smith", "s123_x", "a+b", "x@y.edu"):
        assert intake.valid_student_id(ok)
    for bad in ("", ".", "..", "<img src=x onerror=alert(1)>", "a/b", "a\x1b[2Jb", "x" * 65, "-rf", "a b"):
        assert not intake.valid_student_id(bad), bad


def test_students_skips_links_and_odd_ids(tmp_path):
    sub = tmp_path / "submitted"
    (sub / "alice" / "ch").mkdir(parents=True)
    (sub / "<img src=x onerror=alert(1)>" / "ch").mkdir(parents=True)
    (sub / "mallory").mkdir()
    os.symlink(sub / "alice" / "ch", sub / "mallory" / "ch")
    ok, refused = intake.students(sub, "ch")
    assert ok == ["alice"] and set(refused) == {"<img src=x onerror=alert(1)>", "mallory"}


def test_check_zip_refuses_links_bombs_and_escapes(tmp_path):
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("alice_ch.ipynb", "{}")
    assert intake.check_zip(good) == []
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        link = zipfile.ZipInfo("link_ch.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/shadow")
        zf.writestr("../../escape.txt", "x")
        zf.writestr("bomb.bin", b"\0" * (50 * 2 ** 20))
    problems = " ".join(intake.check_zip(bad))
    assert "symbolic link" in problems and "outside the archive" in problems and "zip bomb" in problems


def test_exchange_owner_check(tmp_path):
    import pwd

    nobody = pwd.getpwnam("nobody")
    d = tmp_path / "inbound" / "nobody+ch+2026-01-01 00:00:00.000000 UTC"
    d.mkdir(parents=True)
    if os.geteuid() == 0:
        assert "belongs to" in collect._owner_problem(d, "nobody")  # root planted it in nobody's name
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
        assert collect._owner_problem(d, "nobody") == ""
        assert "belongs to nobody" in collect._owner_problem(d, pwd.getpwuid(0).pw_name)
    assert collect._owner_problem(d, "no-such-user-here") == ""
    os.symlink(d, tmp_path / "inbound" / "link")
    assert "symbolic link" in collect._owner_problem(tmp_path / "inbound" / "link", "nobody")
