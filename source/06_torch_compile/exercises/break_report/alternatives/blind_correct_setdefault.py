"""Reset, count graphs with CompileCounter inside cd.capture_logs, parse records with rsplit/setdefault, separate fullgraph compile. (written blind, from the release alone)."""
CELL = 'break_report'
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    torch._dynamo.reset()
    counter = CompileCounter()
    with capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counter)(*args)
    reasons = list(logs["graph_breaks"])
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
