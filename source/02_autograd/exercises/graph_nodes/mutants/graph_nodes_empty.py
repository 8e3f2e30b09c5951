"""Returns [] for every tensor."""
CELL = "graph_nodes"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns an empty list for every tensor."
FAILS = ['test_graph_nodes_each_node_once', 'test_graph_nodes_topological_order', 'test_graph_nodes_leaves_and_no_history']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    return []
'''
