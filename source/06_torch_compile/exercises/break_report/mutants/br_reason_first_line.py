"""Keeps only the first line of each log record ("Graph break in user code at ..."), which names no cause."""
KIND = "wrong-value"
NOTE = "Each reason is the whole text of its graph_breaks log record: a single line of it (the header, or the explanation alone) drops part of what the log says about the break."
CELL = "break_report"
FAILS = ["test_break_report_reasons"]
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
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        ok = True
    except Exception:
        ok = False
    torch._dynamo.reset()
    return {"graphs": counter.count, "breaks": len(logs["graph_breaks"]),
            "reasons": [r.splitlines()[0] for r in logs["graph_breaks"]],
            "sites": _sites_of(logs["graph_breaks"]), "fullgraph": ok}
'''
