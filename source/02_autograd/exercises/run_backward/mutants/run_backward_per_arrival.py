"""Runs a node again for every gradient that arrives, on that gradient alone: right values by linearity, but work that doubles with every rung of a ladder."""
CELL = "run_backward"
KIND = "contract"
NOTE = 'Backward is linear, so running a node once per arriving gradient gives the right values, but the work doubles with each diamond a path crosses; the statement asks for each node once, on the sum of what arrived.'
FAILS = ['test_run_backward_own_engine']
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Push every gradient down the graph as soon as it exists (each path separately)."""
    from torch.autograd.graph import get_gradient_edge

    outs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, torch.Tensor):
        grad_outputs = [grad_outputs] * len(outs)
    wanted = [tuple(get_gradient_edge(t))[:2] for t in ins]
    landed = {}
    todo = []
    for out, seed in zip(outs, grad_outputs):
        if seed is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seed = torch.ones_like(out)
        todo.append((out.grad_fn, out.output_nr, seed.detach()))
    with torch.no_grad():
        while todo:
            node, slot, grad = todo.pop()
            meta = node._input_metadata[slot]
            if list(grad.shape) != list(meta.shape):
                grad = grad.sum_to_size(meta.shape)
            grad = grad.to(meta.dtype)
            landed[(node, slot)] = grad if (node, slot) not in landed else landed[(node, slot)] + grad
            if type(node).__name__ == "AccumulateGrad":
                continue
            args = [None] * len(node._input_metadata)
            args[slot] = grad
            sent = node(*args)
            sent = sent if isinstance(sent, tuple) else (sent,)
            for (there, nr), g in zip(node.next_functions, sent):
                if there is not None and g is not None:
                    todo.append((there, nr, g))
    return tuple(landed.get(edge) for edge in wanted)
'''
