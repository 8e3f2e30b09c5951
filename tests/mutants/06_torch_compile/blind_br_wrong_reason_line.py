"""Keeps only the "Explanation:" line of each graph_breaks record instead of the record's whole text. (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'contract'
NOTE = "Each reason is the whole text of its graph_breaks log record: a single line of it (the header, or the explanation alone) drops part of what the log says about the break."
FAILS = ['test_break_report_reasons']
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    torch._dynamo.reset()
    reasons = []
    for record in logs["graph_breaks"]:
        # the record is long: keep the one line that says why
        reasons += [line.strip() for line in record.splitlines() if line.strip().startswith("Explanation:")][:1]
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        full = True
    except Exception:
        full = False
    torch._dynamo.reset()
    return {"graphs": counter.count, "breaks": len(logs["graph_breaks"]), "reasons": reasons, "fullgraph": full}
'''
