"""Sort the distinct nodes by their longest distance from the output (a recursive memoised depth)."""
CELL = "graph_nodes"
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    root = t.grad_fn
    if root is None:
        return []
    nodes, parents = {id(root): root}, {id(root): []}
    todo = [root]
    while todo:
        n = todo.pop()
        for m, _ in n.next_functions:
            if m is None:
                continue
            if id(m) not in nodes:
                nodes[id(m)] = m
                parents[id(m)] = []
                todo.append(m)
            parents[id(m)].append(id(n))
    depth = {}
    def d(k):
        if k not in depth:
            depth[k] = 0 if not parents[k] else 1 + max(d(p) for p in parents[k])
        return depth[k]
    order = sorted(nodes, key=d)
    return [type(nodes[k]).__name__ for k in order]
'''
