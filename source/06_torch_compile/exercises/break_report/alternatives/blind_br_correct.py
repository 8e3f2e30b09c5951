"""Correct: own closure backend collecting graphs, log capture, separate fullgraph compile, reset around each. (written blind, from the release alone; its sites part added when the exercise gained that clause)."""
CELL = 'break_report'
SOURCE = '''
def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    seen = []

    def backend(gm, example_inputs):
        seen.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        with capture_logs("graph_breaks") as logs:
            torch.compile(fn, backend=backend)(*args)
        reasons = [str(r) for r in logs["graph_breaks"]]
        torch._dynamo.reset()
        try:
            torch.compile(fn, backend="eager", fullgraph=True)(*args)
            ok = True
        except Exception:
            ok = False
    finally:
        torch._dynamo.reset()
    sites = {}
    for reason in reasons:
        lines = reason.splitlines()
        file_line = lines[0][lines[0].rindex(" at ") + 4:]
        for line in lines:
            if "Explanation:" in line:
                why = line.split("Explanation:", 1)[1].strip()
                if why not in sites.setdefault(file_line, []):
                    sites[file_line].append(why)
        sites.setdefault(file_line, [])
    return {"graphs": len(seen), "breaks": len(reasons), "reasons": reasons, "sites": sites, "fullgraph": ok}
'''
