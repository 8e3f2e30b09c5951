"""Derives "fullgraph" from the break count (breaks == 0) instead of compiling with fullgraph=True: wrong for g_item (.item()). (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'contract'
NOTE = "Whether a fullgraph=True compile succeeds cannot be read from the break count: under fullgraph=True Dynamo captures some things (like .item()) that break the default compile. Only trying that compile tells."
FAILS = ['test_break_report_fullgraph']
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    torch._dynamo.reset()
    reasons = list(logs["graph_breaks"])
    # no break logged means the whole function is one graph, so fullgraph=True would succeed
    return {"graphs": counter.count, "breaks": len(reasons), "reasons": reasons, "fullgraph": len(reasons) == 0}
'''
