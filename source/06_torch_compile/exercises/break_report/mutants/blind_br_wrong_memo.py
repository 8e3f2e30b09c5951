"""Memoises the report per function (ignores args, never recompiles nor calls fn again on later calls). (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'state'
NOTE = "The report describes one call on these arguments: caching it per function returns an old report for new arguments, without compiling and calling the function again."
FAILS = ['test_break_report_counts']
SOURCE = '''
import re as _re


def _sites_of(records):
    """Each record's site (the FILE:LINE its first line ends with) once, with its distinct explanations."""
    sites = {}
    for record in records:
        first = record.split("\\n", 1)[0]
        found = _re.search(r" at (.+:\\d+)$", first)
        said = sites.setdefault(found.group(1) if found else first, [])
        for text in _re.findall(r"^\\s*Explanation:(.*)$", record, flags=_re.M):
            if text.strip() not in said:
                said.append(text.strip())
    return sites

_REPORTS = {}

def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    if fn in _REPORTS:                      # "the report must be the same every time": compute it once per function
        return dict(_REPORTS[fn])
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        full = True
    except Exception:
        full = False
    torch._dynamo.reset()
    _REPORTS[fn] = {"graphs": counter.count, "breaks": len(logs["graph_breaks"]),
                    "reasons": list(logs["graph_breaks"]),
                    "sites": _sites_of(logs["graph_breaks"]), "fullgraph": full}
    return dict(_REPORTS[fn])
'''
