"""Kahn's algorithm that counts every edge but decrements once per distinct child: a node fed twice by one node (x * x) never becomes ready and is missing. (written blind, from the release alone)."""
CELL = 'graph_nodes'
KIND = 'edge-case'
NOTE = "next_functions has one entry per edge, so a node used twice by one op (x * x) appears twice: edges counted per entry must be released per entry, or that node never becomes ready."
FAILS = ['test_graph_nodes_each_node_once', 'test_graph_nodes_leaves_and_no_history', 'test_graph_nodes_topological_order']
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    root = t.grad_fn
    if root is None:
        return []
    incoming = {}
    nodes = {id(root): root}
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            incoming[id(nxt)] = incoming.get(id(nxt), 0) + 1
            if id(nxt) not in nodes:
                nodes[id(nxt)] = nxt
                stack.append(nxt)
    order = []
    ready = [root]
    while ready:
        node = ready.pop()
        order.append(type(node).__name__)
        children = {id(n): n for n, _ in node.next_functions if n is not None}   # each child once
        for key, nxt in children.items():
            incoming[key] -= 1
            if incoming[key] == 0:
                ready.append(nxt)
    return order
'''
