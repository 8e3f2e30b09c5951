"""Takes graphs and breaks from explain's counts: misses a break before the first op, and says -1 for no ops."""
KIND = "wrong-value"
NOTE = "explain counts graphs, so a break before the first op leaves nothing for it to count, and a function with no ops reports -1; the graphs a backend receives and the graph_breaks log see every one."
CELL = "break_report"
FAILS = ["test_break_report_counts"]
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
    out = torch._dynamo.explain(fn)(*args)
    torch._dynamo.reset()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend="eager")(*args)
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        ok = True
    except Exception:
        ok = False
    torch._dynamo.reset()
    return {"graphs": out.graph_count, "breaks": out.graph_break_count, "reasons": logs["graph_breaks"], "sites": _sites_of(logs["graph_breaks"]), "fullgraph": ok}
'''
