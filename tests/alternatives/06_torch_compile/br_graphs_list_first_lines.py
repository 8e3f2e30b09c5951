"""Counts graphs from out.graphs and keeps only the first line of each reason."""
CELL = "break_report"
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs": int, "breaks": int, "reasons": list[str]} for fn(*args), from torch._dynamo.explain."""
    explained = torch._dynamo.explain(fn)
    result = explained(*args)
    n_graphs = len(result.graphs)
    reasons = []
    for br in result.break_reasons:
        reasons.append(br.reason.strip().split("\\n")[0])
    return dict(graphs=n_graphs, breaks=n_graphs - 1, reasons=reasons)
'''
