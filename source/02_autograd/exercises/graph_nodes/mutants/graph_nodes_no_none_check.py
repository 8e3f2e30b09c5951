"""Does not skip the (None, 0) entries of inputs without grad: crashes on any graph with a constant input."""
CELL = "graph_nodes"
KIND = "edge-case"
NOTE = "Entries (None, 0) in next_functions stand for inputs that need no gradient: they are not nodes, and following them crashes the walk on any graph with a constant input."
FAILS = ['test_graph_nodes_each_node_once', 'test_graph_nodes_topological_order', 'test_graph_nodes_leaves_and_no_history']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    if t.grad_fn is None:
        return []
    post, seen = [], set()
    def visit(node):
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            if id(nxt) not in seen:
                visit(nxt)
        post.append(type(node).__name__)
    visit(t.grad_fn)
    return post[::-1]
'''
