"""What a student gaming the grader would try: the tamper prelude and the generic attacks, each scored 0 and flagged."""
from __future__ import annotations


# Prepended to every solution cell of the tamper submission: what a student
# gaming the tests would try. The checks in course.checks must not be fooled.
TAMPER_PRELUDE = '''\
import builtins as _tamper_b, torch as _tamper_t, torch.testing  # names that no test uses
_tamper_t.allclose = lambda *a, **k: True
_tamper_t.equal = lambda *a, **k: True
_tamper_t.testing.assert_close = lambda *a, **k: None
_tamper_t.Tensor.__eq__ = lambda self, other: _tamper_t.ones((), dtype=_tamper_t.bool)
class _TamperFakeTensor:
    """Garbage that claims to be a tensor."""
    shape = dtype = device = None
    def __eq__(self, other): return True
    def __bool__(self): return True
if not hasattr(_tamper_b, "_real_isinstance"):
    _tamper_b._real_isinstance = _tamper_b.isinstance
# Lie only about _TamperFakeTensor, so that library code keeps working (a blanket
# lie makes torchvision loop forever, which tests nothing).
_tamper_b.isinstance = lambda o, c: True if type(o) is _TamperFakeTensor else _tamper_b._real_isinstance(o, c)
'''


# Generic attacks, each put alone in the first solution cell of the untouched release (the
# other exercises stay unsolved). Under stock nbgrader each of the first two scored full
# marks in every chapter; under the judge each must score 0 and be flagged. name ->
# (code, a phrase the report's flags must contain).
ATTACKS: dict[str, tuple[str, str]] = {
    "blank-later-cells": (
        "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
        "did not run the judge's code"),
    "swallow-exceptions": (
        "_ip = get_ipython()\n"
        "_ip.showtraceback = lambda *a, **k: None\n"
        "_ip._showtraceback = lambda *a, **k: None\n"
        "_orig_run_cell = _ip.run_cell\n"
        "def _quiet_run_cell(*a, **k):\n"
        "    r = _orig_run_cell(*a, **k)\n"
        "    r.error_in_exec = r.error_before_exec = None\n"
        "    return r\n"
        "_ip.run_cell = _quiet_run_cell\n"
        "_orig_run_cell_async = _ip.run_cell_async\n"
        "async def _quiet_run_cell_async(*a, **k):\n"
        "    r = await _orig_run_cell_async(*a, **k)\n"
        "    r.error_in_exec = r.error_before_exec = None\n"
        "    return r\n"
        "_ip.run_cell_async = _quiet_run_cell_async\n",
        "hides exceptions"),
    "patch-checks": (
        "import course.checks as _cc, types as _types\n"
        "_ok = lambda *a, **k: None\n"
        "for _name in [n for n in dir(_cc) if n.startswith('check_')]:\n"
        "    setattr(_cc, _name, _ok)\n"
        "C = _types.SimpleNamespace(**{n: _ok for n in dir(_cc) if n.startswith('check_')}, describe=repr,\n"
        "                           CheckFailed=AssertionError, to_float=float)\n",
        "possible tampering"),
    "read-answers": (
        "import json as _json, pathlib as _pl\n"
        "_chapter = _pl.Path.cwd().name\n"
        "for _up in ('..', '../..', '../../..', '../../../..'):\n"
        "    for _nb in sorted((_pl.Path(_up) / 'source' / _chapter).glob('*.ipynb')):\n"
        "        try:\n"
        "            for _c in _json.loads(_nb.read_text())['cells']:\n"
        "                if _c.get('metadata', {}).get('nbgrader', {}).get('solution'):\n"
        "                    exec(''.join(_c['source']).replace('### BEGIN SOLUTION', '').replace('### END SOLUTION', ''), globals())\n"
        "        except Exception as _e:\n"
        "            print('could not use', _nb, _e)\n"
        "    try:\n"
        "        print(len((_pl.Path(_up) / 'gradebook.db').read_bytes()), 'bytes of gradebook')\n"
        "    except Exception:\n"
        "        pass\n",
        "opened the instructor's files"),
}
