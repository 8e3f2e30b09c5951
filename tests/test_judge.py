"""The judge's authoring API: hidden tests as probe + verdict, decided outside the student's kernel.

The class of threatening submissions (sandbox escapes, hostile files, results, outputs and text) is in
``tests/test_threats.py``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from course.checks import CheckFailed
from course.grading.judge import verdicts as J



# --- the authoring API ---------------------------------------------------------------------------

def _toy_judge(tmp_path: Path, body: str) -> J.Judge:
    d = tmp_path / "source" / "00_toy"
    d.mkdir(parents=True)
    (d / "judge.py").write_text("from course import checks as C\nfrom course.grading.judge.verdicts import Judge, visible\n"
                                "judge = Judge()\n" + body)
    return J.load("00_toy", tmp_path)


def test_probe_source_is_the_def_without_decorators(tmp_path):
    j = _toy_judge(tmp_path, '''
@judge.shared
def helper(n):
    return list(range(n))

@judge.probe("test_a")
def probe_a(seed):
    return helper(3)

@probe_a.verdict
def _(got, ref):
    C.check_equal(got, ref, "a")
''')
    code = j.code("test_a")
    assert code.name == "probe_a" and "@" not in code.source
    assert code.source.startswith("def helper(n):") and "def probe_a(seed):" in code.source
    ns: dict = {}
    exec(code.source, ns)
    assert ns["probe_a"](0) == [0, 1, 2]
    assert len(j.fingerprint()) == 16


def test_load_refuses_incomplete_judges(tmp_path):
    with pytest.raises(J.JudgeError, match="does not exist"):
        J.load("00_missing", tmp_path)
    with pytest.raises(J.JudgeError, match="without a verdict"):
        _toy_judge(tmp_path, '@judge.probe("t")\ndef p(seed):\n    return 1\n')


def test_probes_may_not_close_over_judge_variables(tmp_path):
    with pytest.raises(J.JudgeError, match="enclosing"):
        _toy_judge(tmp_path, '''
def make():
    k = 3
    @judge.probe("t")
    def p(seed):
        return k
    return p
make()
''')


def test_decide_covers_every_outcome(tmp_path):
    j = _toy_judge(tmp_path, '''
@judge.probe("t")
def p(seed):
    return 1

@p.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["v"], ref["v"], "visible example")
    C.check_equal(got["h"], ref["h"], "hidden case")
''')
    probe = j.probes["t"]
    ref = {"ok": True, "value": {"v": 1, "h": 2}}
    assert J.decide(probe, {"ok": True, "value": {"v": 1, "h": 2}}, ref).passed
    v = J.decide(probe, {"ok": True, "value": {"v": 0, "h": 2}}, ref)
    assert not v.passed and v.visible_failed and v.kind == "check" and "visible example" in v.message
    v = J.decide(probe, {"ok": True, "value": {"v": 1, "h": 3}}, ref)
    assert not v.passed and not v.visible_failed
    v = J.decide(probe, {"ok": False, "error": "TypeError: bad", "where": "your notebook, line 3"}, ref)
    assert not v.passed and v.kind == "probe" and "TypeError: bad" in v.message and "line 3" in v.message
    v = J.decide(probe, {"ok": True, "value": [1, 2]}, ref)
    assert not v.passed and v.kind == "form" and "form" in v.message
    assert J.decide(probe, None, ref).kind == "missing"
    with pytest.raises(J.JudgeError, match="reference solution fails"):
        J.decide(probe, {"ok": True, "value": 1}, {"ok": False, "error": "boom"})


def test_visible_tags_only_its_own_failures():
    with pytest.raises(CheckFailed) as err:
        with J.visible():
            raise CheckFailed("x")
    assert err.value.visible is True
    with pytest.raises(ValueError):
        with J.visible():
            raise ValueError("not a check")


def test_coverage_is_exact(tmp_path):
    j = _toy_judge(tmp_path, '@judge.probe("t")\ndef p(seed):\n    return 1\n@p.verdict\ndef _(g, r):\n    pass\n')
    J.check_coverage(j, ["t"], "toy")
    with pytest.raises(J.JudgeError, match="without a probe"):
        J.check_coverage(j, ["t", "u"], "toy")


# --- a class with one submission per threat, through the real grading command ----------------------
