"""Counts breaks from torch._dynamo.utils.counters["graph_break"], which skips some (a break in a loop, a data-dependent if)."""
KIND = "wrong-value"
NOTE = "Dynamo's internal graph_break counters are not one entry per break: some breaks never reach them, and their keys are short reasons, not the log's text. The graph_breaks log has one record per break."
CELL = "break_report"
FAILS = ["test_break_report_counts", "test_break_report_reasons"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
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
    return {"graphs": counter.count, "breaks": len(reasons), "reasons": reasons, "fullgraph": ok}
'''
