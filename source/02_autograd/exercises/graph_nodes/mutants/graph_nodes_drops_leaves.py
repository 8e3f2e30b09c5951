"""Leaves' AccumulateGrad nodes dropped ("they are not operations"), otherwise a correct topological walk."""
CELL = "graph_nodes"
KIND = "edge-case"
NOTE = "The leaves' AccumulateGrad nodes are backward nodes too (they write .grad), and every reachable node is to be listed, them included."
FAILS = ['test_graph_nodes_each_node_once', 'test_graph_nodes_topological_order', 'test_graph_nodes_leaves_and_no_history']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    if t.grad_fn is None:
        return []
    seen, post = set(), []
    def visit(node):
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                visit(nxt)
        post.append(node)
    visit(t.grad_fn)
    return [type(n).__name__ for n in reversed(post) if type(n).__name__ != "AccumulateGrad"]
'''
