"""Right output, but delegates the walk to course.graphs (backward_graph + depths) instead of walking next_functions itself. (written blind, from the release alone)."""
CELL = 'graph_nodes'
KIND = 'contract'
NOTE = "The walk over next_functions is the exercise: delegating it to the course's graph helpers gives the output without doing the walk yourself."
FAILS = ['test_graph_nodes_each_node_once']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    nodes, edges = G.backward_graph(t)
    depth = G.depths(len(nodes), edges)
    order = sorted(range(len(nodes)), key=lambda i: depth[i])
    return [type(nodes[i]).__name__ for i in order]
'''
