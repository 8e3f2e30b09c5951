"""Restores only the log artifacts by hand with set_logs(**artifacts): log levels set before (e.g. dynamo=INFO) are lost. (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'contract'
NOTE = "torch._logging.set_logs replaces the whole logging configuration: every artifact and log level it is not given goes back to its default, so calling it to clean up wipes the caller's settings."
FAILS = ['test_break_report_repeat']
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
    _, was_on = cd.log_settings()
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    reasons = list(logs["graph_breaks"])
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        full = True
    except Exception:
        full = False
    torch._dynamo.reset()
    torch._logging.set_logs(**{name: True for name in was_on})   # put back the artifacts that were on
    return {"graphs": counter.count, "breaks": len(reasons), "reasons": reasons, "sites": _sites_of(reasons), "fullgraph": full}
'''
