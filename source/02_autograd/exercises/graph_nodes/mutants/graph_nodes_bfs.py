"""Breadth-first order with de-duplication: right nodes, but a diamond's shared node can come before one of its senders."""
CELL = "graph_nodes"
KIND = "wrong-value"
NOTE = "Discovery order (breadth-first, or depth-first pre-order) is not a topological order: in a diamond the shared node can come out before a node that feeds it, which must come first."
FAILS = ["test_graph_nodes_topological_order"]
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    if t.grad_fn is None:
        return []
    order, seen, queue = [], {id(t.grad_fn)}, [t.grad_fn]
    while queue:
        node = queue.pop(0)
        order.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                queue.append(nxt)
    return order
'''
