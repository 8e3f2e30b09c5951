"""Runs a node as soon as its first gradient arrives (a walk with a visited set, no dependency counts)."""
CELL = "run_backward"
KIND = "wrong-value"
NOTE = 'A node reached along two paths must wait until both have delivered (dependency counts); run on the first arrival, it misses what comes later.'
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs', 'test_run_backward_inputs', 'test_run_backward_own_engine']
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Return the gradients of outputs with respect to each of inputs, like torch.autograd.grad(..., allow_unused=True):
    a tuple, one entry per input (None where no gradient reaches it), computed by calling the graph's nodes."""
    from torch.autograd.graph import get_gradient_edge

    outs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, torch.Tensor):
        grad_outputs = [grad_outputs] * len(outs)
    wanted = [tuple(get_gradient_edge(t))[:2] for t in ins]        # (node, slot) where each input's gradient lands
    pending = {}                                                     # node -> the sums arrived so far, one per slot

    def arrive(node, slot, grad):
        meta = node._input_metadata[slot]
        if list(grad.shape) != list(meta.shape):                     # the op broadcast this input: fold it back
            grad = grad.sum_to_size(meta.shape)
        grad = grad.to(meta.dtype)
        sums = pending.setdefault(node, [None] * len(node._input_metadata))
        sums[slot] = grad if sums[slot] is None else sums[slot] + grad

    for out, seed in zip(outs, grad_outputs):
        if seed is None:
            if out.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs, not shape {tuple(out.shape)}")
            seed = torch.ones_like(out)
        arrive(out.grad_fn, out.output_nr, seed.detach())
    starts = list(dict.fromkeys(out.grad_fn for out in outs))
    waiting = {}                                                     # node -> senders that have not run yet
    frontier, known = list(starts), set(starts)
    while frontier:
        here = frontier.pop()
        for there, _ in here.next_functions:
            if there is not None:
                waiting[there] = waiting.get(there, 0) + 1
                if there not in known:
                    known.add(there)
                    frontier.append(there)
    runnable = [node for node in starts if waiting.get(node, 0) == 0]
    landed = {}
    queued = set(runnable)
    with torch.no_grad():                                            # the engine does not record the backward pass
        while runnable:
            node = runnable.pop()
            sums = pending.pop(node, [None] * len(node._input_metadata))
            landed.update(((node, slot), g) for slot, g in enumerate(sums))
            if type(node).__name__ == "AccumulateGrad" or all(g is None for g in sums):
                sent = [None] * len(node.next_functions)
            else:
                sent = node(*sums)
                sent = sent if isinstance(sent, tuple) else (sent,)
            for (there, slot), grad in zip(node.next_functions, sent):
                if there is None:
                    continue
                if grad is not None:
                    arrive(there, slot, grad)
                if there not in queued:                      # run it on what it has now
                    queued.add(there)
                    runnable.insert(0, there)
    return tuple(landed.get(edge) for edge in wanted)
'''
