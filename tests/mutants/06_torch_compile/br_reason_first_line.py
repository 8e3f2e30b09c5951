"""Keeps only the first line of each log record ("Graph break in user code at ..."), which names no cause."""
KIND = "wrong-value"
NOTE = "Each reason is the whole text of its graph_breaks log record: a single line of it (the header, or the explanation alone) drops part of what the log says about the break."
CELL = "break_report"
FAILS = ["test_break_report_reasons"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
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
            "reasons": [r.splitlines()[0] for r in logs["graph_breaks"]], "fullgraph": ok}
'''
