"""Recursive depth-first post-order: right on small graphs, but raises RecursionError on a graph deeper than Python's recursion limit (a long chain, an unrolled RNN). (written blind, from the release alone)."""
CELL = 'graph_nodes'
KIND = 'edge-case'
NOTE = "A recursive walk goes one Python frame deeper per node, so a long chain (an unrolled loop) exceeds the recursion limit and raises RecursionError."
FAILS = ['test_graph_nodes_each_node_once']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    seen = {}
    post = []

    def visit(node):
        if node is None or id(node) in seen:
            return
        seen[id(node)] = node
        for nxt, _ in node.next_functions:
            visit(nxt)
        post.append(node)

    visit(t.grad_fn)
    return [type(n).__name__ for n in reversed(post)]
'''
