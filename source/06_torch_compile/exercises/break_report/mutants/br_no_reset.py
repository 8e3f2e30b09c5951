"""Never resets Dynamo: a function compiled before (or reported twice) hits its cached code and reports nothing."""
KIND = "state"
NOTE = "Dynamo caches compiled code per function: without a fresh cache, a function compiled before (or reported a second time) reuses its cached code, so nothing is compiled or logged."
CELL = "break_report"
FAILS = ["test_break_report_fullgraph", "test_break_report_repeat"]
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
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        ok = True
    except Exception:
        ok = False
    return {"graphs": counter.count, "breaks": len(logs["graph_breaks"]), "reasons": list(logs["graph_breaks"]),
            "sites": _sites_of(logs["graph_breaks"]),
            "fullgraph": ok}
'''
