"""No de-duplication: a recursive walk that emits a node every time it is reached, so diamonds repeat nodes."""
CELL = "graph_nodes"
KIND = "wrong-value"
NOTE = "A node reached along two paths is one node: emitting it every time it is reached repeats a diamond's shared nodes. Recognise nodes by identity and list each once."
FAILS = ['test_graph_nodes_each_node_once', 'test_graph_nodes_topological_order', 'test_graph_nodes_leaves_and_no_history']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    if t.grad_fn is None:
        return []
    out = []
    def visit(node):
        out.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                visit(nxt)
    visit(t.grad_fn)
    return out
'''
