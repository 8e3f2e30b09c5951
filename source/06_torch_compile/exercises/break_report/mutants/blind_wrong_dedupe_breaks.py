"""Treats identical graph_breaks records as one break (dedupes the records), so a helper reached twice, or a suppressed duplicate, is undercounted in breaks and reasons. (written blind, from the release alone)."""
CELL = 'break_report'
KIND = 'wrong-value'
NOTE = 'Each record of the graph_breaks log is one break, even when its text repeats another: a helper called twice breaks twice, and dropping repeats undercounts.'
FAILS = ['test_break_report_counts']
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    reasons = []
    for record in logs["graph_breaks"]:
        if record not in reasons:       # the log can say the same thing several times
            reasons.append(record)
    sites = {}
    for record in reasons:
        lines = record.splitlines()
        site = lines[0].rsplit(" ", 1)[-1]
        explanations = sites.setdefault(site, [])
        for line in lines[1:]:
            if "Explanation:" in line:
                text = line.split("Explanation:", 1)[1].strip()
                if text not in explanations:
                    explanations.append(text)
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
