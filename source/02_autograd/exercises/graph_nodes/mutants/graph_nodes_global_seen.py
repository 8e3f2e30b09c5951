"""A visited set kept between calls (module level, never cleared): the second graph that shares nodes with an earlier one, or the same graph walked twice, loses them."""
CELL = "graph_nodes"
KIND = "state"
NOTE = "A visited set kept at module level survives between calls, so a later walk skips nodes an earlier call saw; each call needs bookkeeping of its own."
FAILS = ['test_graph_nodes_each_node_once', 'test_graph_nodes_topological_order', 'test_graph_nodes_leaves_and_no_history']
SOURCE = '''
_SEEN = set()

def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    root = t.grad_fn
    if root is None or id(root) in _SEEN:
        return []
    order = []
    def visit(node):
        if node is None or id(node) in _SEEN:
            return
        _SEEN.add(id(node))
        for nxt, _ in node.next_functions:
            visit(nxt)
        order.append(type(node).__name__)
    visit(root)
    return order[::-1]
'''
