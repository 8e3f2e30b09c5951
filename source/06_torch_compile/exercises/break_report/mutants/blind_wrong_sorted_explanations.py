"""Collects each site's explanations in a set and returns them sorted, losing the order in which they were first logged. (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'wrong-value'
NOTE = 'Explanations keep the order in which they were first logged: a set loses the order, and sorting imposes another one.'
FAILS = ['test_break_report_sites']
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    reasons = list(logs["graph_breaks"])
    found = {}
    for record in reasons:
        lines = record.splitlines()
        site = lines[0].rsplit(" ", 1)[-1]
        found.setdefault(site, set()).update(
            l.split("Explanation:", 1)[1].strip() for l in lines if "Explanation:" in l)
    sites = {site: sorted(texts) for site, texts in found.items()}   # each text once, deterministic
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
        fullgraph = True
    except Exception:
        fullgraph = False
    torch._dynamo.reset()
    return {"graphs": counter.count, "breaks": len(reasons), "reasons": reasons,
            "sites": sites, "fullgraph": fullgraph}
'''
