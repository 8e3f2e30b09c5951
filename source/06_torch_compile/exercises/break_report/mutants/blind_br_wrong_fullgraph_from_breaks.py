"""Derives "fullgraph" from the break count (breaks == 0) instead of compiling with fullgraph=True: wrong for g_item (.item()). (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'contract'
NOTE = "Whether a fullgraph=True compile succeeds cannot be read from the break count: under fullgraph=True Dynamo captures some things (like .item()) that break the default compile. Only trying that compile tells."
FAILS = ['test_break_report_fullgraph']
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

def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    torch._dynamo.reset()
    reasons = list(logs["graph_breaks"])
    # no break logged means the whole function is one graph, so fullgraph=True would succeed
    return {"graphs": counter.count, "breaks": len(reasons), "reasons": reasons, "sites": _sites_of(reasons),
            "fullgraph": len(reasons) == 0}
'''
