"""Infers fullgraph from the break count (no break means fullgraph works) instead of compiling with fullgraph=True."""
KIND = "contract"
NOTE = "Whether a fullgraph=True compile succeeds cannot be read from the break count: under fullgraph=True Dynamo captures some things (like .item()) that break the default compile. Only trying that compile tells."
CELL = "break_report"
FAILS = ["test_break_report_fullgraph"]
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    torch._dynamo.reset()
    breaks = len(logs["graph_breaks"])
    return {"graphs": counter.count, "breaks": breaks, "reasons": list(logs["graph_breaks"]), "fullgraph": breaks == 0}
'''
