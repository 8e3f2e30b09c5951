"""Closure backend counting graphs, records from cd.capture_logs, regex for the site and explanations, dict.fromkeys for order-keeping dedupe, fullgraph via a separate fresh compile. (written blind, from the release alone)."""
CELL = 'break_report'
SOURCE = r'''
import re

_SITE = re.compile(r"in user code at (\S+:\d+)\s*$")
_EXPLANATION = re.compile(r"^\s*Explanation:(.*)$")


def _fullgraph_ok(fn, args):
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    except Exception:
        return False
    finally:
        torch._dynamo.reset()
    return True


def break_report(fn, *args) -> dict:
    """Return {"graphs", "breaks", "reasons", "sites", "fullgraph"} for one compiled call fn(*args), from a fresh cache."""
    graphs = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    with cd.capture_logs("graph_breaks") as logs:
        torch.compile(fn, backend=counting_backend)(*args)
    records = [str(r) for r in logs["graph_breaks"]]

    grouped = {}
    for record in records:
        first, *rest = record.split("\n")
        site = _SITE.search(first).group(1)
        texts = [m.group(1).strip() for m in map(_EXPLANATION.match, rest) if m]
        grouped.setdefault(site, {}).update(dict.fromkeys(texts))
    sites = {site: list(texts) for site, texts in grouped.items()}

    return {"graphs": len(graphs), "breaks": len(records), "reasons": records,
            "sites": sites, "fullgraph": _fullgraph_ok(fn, args)}
'''
