"""A topological order first (iterative reverse post-order), then one sweep over it; leaves matched by .variable, intermediate inputs by (grad_fn, output_nr)."""
CELL = "run_backward"
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Gradients of outputs with respect to inputs (None where unused), by one sweep in topological order."""
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs] * len(outs)
    # reverse post-order of an iterative depth-first walk: every node after all the nodes that feed it
    post, entered = [], set()
    for out in outs:
        todo = [(out.grad_fn, False)]
        while todo:
            node, expanded = todo.pop()
            if expanded:
                post.append(node)
            elif node not in entered:
                entered.add(node)
                todo.append((node, True))
                todo.extend((nxt, False) for nxt, _ in node.next_functions if nxt is not None and nxt not in entered)
    buffers = {}                                         # (node, slot) -> sum of the gradients arrived

    def deliver(node, slot, grad):
        meta = node._input_metadata[slot]
        grad = grad.sum_to_size(tuple(meta.shape)).to(meta.dtype)
        buffers[(node, slot)] = buffers[(node, slot)] + grad if (node, slot) in buffers else grad

    for out, v in zip(outs, grad_outputs):
        if v is None:
            if out.numel() != 1:
                raise RuntimeError("grad_outputs is needed for an output with more than one element")
            v = torch.ones_like(out)
        deliver(out.grad_fn, out.output_nr, v.detach())
    with torch.no_grad():
        for node in reversed(post):
            args = [buffers.get((node, k)) for k in range(len(node._input_metadata))]
            if hasattr(node, "variable") or all(a is None for a in args):
                continue
            grads = node(*args)
            if not isinstance(grads, tuple):
                grads = (grads,)
            for (nxt, nr), g in zip(node.next_functions, grads):
                if nxt is not None and g is not None:
                    deliver(nxt, nr, g)
    result = []
    for t in ins:
        if t.grad_fn is None:                            # a leaf: its gradient lands at its AccumulateGrad node
            key = next(((n, 0) for n in entered if getattr(n, "variable", None) is t), None)
        else:
            key = (t.grad_fn, t.output_nr)
        result.append(buffers.get(key))
    return tuple(result)
'''
