"""Iterative stack DFS in pre-order (mark on push): emits a node before all its feeders when the diamond's inputs come in the other order. (written blind, from the release alone)."""
CELL = 'graph_nodes'
KIND = 'graph'
NOTE = "Discovery order (breadth-first, or depth-first pre-order) is not a topological order: in a diamond the shared node can come out before a node that feeds it, which must come first."
FAILS = ['test_graph_nodes_topological_order']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    if t.grad_fn is None:
        return []
    order = []
    seen = {id(t.grad_fn)}
    keep = [t.grad_fn]
    stack = [t.grad_fn]
    while stack:
        node = stack.pop()
        order.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                keep.append(nxt)
                stack.append(nxt)
    return order
'''
