"""Infers fullgraph from the break count (no break means fullgraph works) instead of compiling with fullgraph=True."""
KIND = "contract"
NOTE = "Whether a fullgraph=True compile succeeds cannot be read from the break count: under fullgraph=True Dynamo captures some things (like .item()) that break the default compile. Only trying that compile tells."
CELL = "break_report"
FAILS = ["test_break_report_fullgraph"]
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
    breaks = len(logs["graph_breaks"])
    return {"graphs": counter.count, "breaks": breaks, "reasons": list(logs["graph_breaks"]),
            "sites": _sites_of(logs["graph_breaks"]), "fullgraph": breaks == 0}
'''
