"""Reverse depth-first post-order (iterative), instead of Kahn's algorithm."""
CELL = "graph_nodes"
SOURCE = '''
def graph_nodes(t: torch.Tensor) -> list[str]:
    """Return the class names of all backward nodes reachable from t.grad_fn, each once, in topological order."""
    if t.grad_fn is None:
        return []
    post, seen = [], {id(t.grad_fn)}
    stack = [(t.grad_fn, iter(t.grad_fn.next_functions))]
    while stack:
        node, children = stack[-1]
        for nxt, _ in children:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append((nxt, iter(nxt.next_functions)))
                break
        else:
            stack.pop()
            post.append(type(node).__name__)
    return post[::-1]
'''
