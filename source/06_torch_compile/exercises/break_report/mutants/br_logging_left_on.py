"""Turns the graph_breaks log on with set_logs and a handler, and never turns it off again (state leaks)."""
KIND = "mutation"
NOTE = "Logging turned on inside the function is never put back: after the call the graph_breaks log stays on, and the caller's own log settings are not restored."
CELL = "break_report"
FAILS = ["test_break_report_repeat"]
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

import logging as _logging

def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    records = []

    class _Keep(_logging.Handler):
        def emit(self, record):
            if record.name.endswith("__graph_breaks"):
                records.append(record.getMessage())

    torch._dynamo.reset()
    torch._logging.set_logs(graph_breaks=True)
    handler = _Keep()
    _logging.getLogger("torch._dynamo").addHandler(handler)
    counter = CompileCounter()
    torch.compile(fn, backend=counter)(*args)
    _logging.getLogger("torch._dynamo").removeHandler(handler)
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        ok = True
    except Exception:
        ok = False
    torch._dynamo.reset()
    return {"graphs": counter.count, "breaks": len(records), "reasons": records, "sites": _sites_of(records), "fullgraph": ok}
'''
