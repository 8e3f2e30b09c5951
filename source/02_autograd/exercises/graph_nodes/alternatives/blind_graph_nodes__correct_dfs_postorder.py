"""Correct: reverse of an iterative depth-first post-order, nodes recognised by identity (and kept alive). (written blind, from the release alone)."""
CELL = 'graph_nodes'
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    root = t.grad_fn
    if root is None:
        return []
    seen = {id(root): root}          # keep the node objects alive so that id() stays unique
    post = []
    stack = [(root, iter([n for n, _ in root.next_functions if n is not None]))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if id(child) not in seen:
                seen[id(child)] = child
                stack.append((child, iter([n for n, _ in child.next_functions if n is not None])))
                break
        else:
            stack.pop()
            post.append(node)
    return [type(n).__name__ for n in reversed(post)]
'''
