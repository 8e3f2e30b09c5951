"""Takes the site from the user code traceback, at the line of fn itself (the call that led to the break), instead of the line the record names."""
KIND = "wrong-value"
NOTE = "The site is where tracing stopped, which can be inside a helper or a library: the FILE:LINE ending the record's first line. Your own function's calling line is further out, and repeated records carry no traceback."
CELL = "break_report"
FAILS = ["test_break_report_sites"]
SOURCE = '''
import re as _re


def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    records = list(logs["graph_breaks"])
    report = {"graphs": counter.count, "breaks": len(records), "reasons": records, "sites": {}, "fullgraph": True}
    for record in records:
        header, *body = record.splitlines()
        where = header.rsplit(" at ", 1)[-1]
        for line in body:
            found = _re.match(r'\\s*File "(.+)", line (\\d+), in (\\w+)', line)
            if found and found.group(3) == fn.__name__:
                where = f"{found.group(1)}:{found.group(2)}"
        explained = report["sites"].setdefault(where, [])
        for line in body:
            if line.strip().startswith("Explanation:"):
                text = line.strip()[len("Explanation:"):].strip()
                if text not in explained:
                    explained.append(text)
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Exception:
        report["fullgraph"] = False
    return report
'''
