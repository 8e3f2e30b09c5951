"""Counts breaks from torch._dynamo.utils.counters["graph_break"], which skips some (a break in a loop, a data-dependent if)."""
KIND = "wrong-value"
NOTE = "Dynamo's graph_break counters are not one entry per break: some breaks never reach them, and their keys are short reasons, not the log's text (no site, no explanation). The graph_breaks log has one record per break."
CELL = "break_report"
FAILS = ["test_break_report_counts", "test_break_report_reasons", "test_break_report_sites"]
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
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    counter = CompileCounter()
    torch.compile(fn, backend=counter)(*args)
    reasons = [reason for reason, n in counters["graph_break"].items() for _ in range(n)]
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        ok = True
    except Exception:
        ok = False
    torch._dynamo.reset()
    return {"graphs": counter.count, "breaks": len(reasons), "reasons": reasons, "sites": _sites_of(reasons), "fullgraph": ok}
'''
