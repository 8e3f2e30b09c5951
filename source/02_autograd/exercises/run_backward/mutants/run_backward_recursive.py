"""Orders the nodes with a recursive depth-first walk: fine on small graphs, RecursionError on an unrolled loop."""
CELL = "run_backward"
KIND = "edge-case"
NOTE = "A recursive walk stops at Python's recursion limit (about 1000 frames); an unrolled loop gives graphs thousands of nodes deep."
FAILS = ['test_run_backward_scalar']
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Topological order by recursive post-order, then one sweep."""
    from torch.autograd.graph import get_gradient_edge

    outs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, torch.Tensor):
        grad_outputs = [grad_outputs] * len(outs)
    order, done = [], set()

    def visit(node):
        if node is None or node in done:
            return
        done.add(node)
        for nxt, _ in node.next_functions:
            visit(nxt)
        order.append(node)

    for out in outs:
        visit(out.grad_fn)
    buffers = {}

    def add(node, slot, grad):
        meta = node._input_metadata[slot]
        if list(grad.shape) != list(meta.shape):
            grad = grad.sum_to_size(meta.shape)
        grad = grad.to(meta.dtype)
        key = (node, slot)
        buffers[key] = grad if key not in buffers else buffers[key] + grad

    for out, seed in zip(outs, grad_outputs):
        if seed is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seed = torch.ones_like(out)
        add(out.grad_fn, out.output_nr, seed.detach())
    with torch.no_grad():
        for node in reversed(order):
            args = [buffers.get((node, k)) for k in range(len(node._input_metadata))]
            if type(node).__name__ == "AccumulateGrad" or all(a is None for a in args):
                continue
            sent = node(*args)
            sent = sent if isinstance(sent, tuple) else (sent,)
            for (nxt, nr), g in zip(node.next_functions, sent):
                if nxt is not None and g is not None:
                    add(nxt, nr, g)
    return tuple(buffers.get(tuple(get_gradient_edge(t))[:2]) for t in ins)
'''
