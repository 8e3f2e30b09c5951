"""Its own logging.Handler on torch's loggers and a closure backend; cd.capture_logs only switches the artifact on and back."""
CELL = "break_report"
SOURCE = '''
import logging as _logging

def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    records, graphs = [], []

    class _Keep(_logging.Handler):
        def emit(self, record):
            if record.name.endswith(".__graph_breaks"):
                records.append(record.getMessage())

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    handler = _Keep()
    torch._dynamo.reset()
    with cd.capture_logs("graph_breaks"):           # on now, and back as it was afterwards
        logger = _logging.getLogger("torch._dynamo")
        logger.addHandler(handler)
        try:
            torch.compile(fn, backend=backend)(*args)
        finally:
            logger.removeHandler(handler)
    torch._dynamo.reset()
    fullgraph = True
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Exception:
        fullgraph = False
    finally:
        torch._dynamo.reset()
    sites = {}
    for record in records:                          # the site ends the first line; explanations, deduplicated
        site = record.partition("\\n")[0].split(" in user code at ")[-1]
        texts = [line.split("Explanation:", 1)[1].strip() for line in record.splitlines()
                 if line.lstrip().startswith("Explanation:")]
        sites[site] = list(dict.fromkeys(sites.get(site, []) + texts))
    return dict(graphs=len(graphs), breaks=len(records), reasons=records, sites=sites, fullgraph=fullgraph)
'''
