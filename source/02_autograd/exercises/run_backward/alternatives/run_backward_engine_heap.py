"""The engine's own schedule: dependency counts and a heap that runs the ready node created last (largest _sequence_nr) first."""
CELL = "run_backward"
SOURCE = '''
def run_backward(outputs, inputs, grad_outputs=None):
    """Like torch.autograd.grad(outputs, inputs, grad_outputs, allow_unused=True), scheduled as the engine does."""
    import heapq
    import itertools
    from torch.autograd.graph import get_gradient_edge

    if isinstance(outputs, torch.Tensor):
        outputs, grad_outputs = [outputs], [grad_outputs] if not isinstance(grad_outputs, (list, tuple)) else grad_outputs
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    edges = [get_gradient_edge(t) for t in inputs]
    captured = {(e.node, e.output_nr): None for e in edges}
    stack = list(dict.fromkeys(o.grad_fn for o in outputs))   # two outputs of one node: walk it once
    deps, seen = {}, set(stack)
    while stack:
        fn = stack.pop()
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    inbox = {}
    for o, go in zip(outputs, grad_outputs):
        if go is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            go = torch.ones_like(o)
        box = inbox.setdefault(o.grad_fn, {})
        box[o.output_nr] = box[o.output_nr] + go if o.output_nr in box else go.detach()
    tie = itertools.count()
    heap = []
    for fn in dict.fromkeys(o.grad_fn for o in outputs):
        if deps.get(fn, 0) == 0:
            heapq.heappush(heap, (-fn._sequence_nr(), next(tie), fn))
    with torch.no_grad():
        while heap:
            _, _, fn = heapq.heappop(heap)
            box = inbox.pop(fn, {})
            for k, g in box.items():
                if (fn, k) in captured:
                    captured[(fn, k)] = g
            args = [box.get(k) for k in range(len(fn._input_metadata))]
            is_acc = type(fn).__name__ == "AccumulateGrad"
            grads = (None,) * len(fn.next_functions) if is_acc or not box else fn(*args)
            if not isinstance(grads, tuple):
                grads = (grads,)
            for (nxt, nr), g in zip(fn.next_functions, grads):
                if nxt is None:
                    continue
                if g is not None:
                    meta = nxt._input_metadata[nr]
                    if tuple(g.shape) != tuple(meta.shape):
                        g = g.sum_to_size(meta.shape)
                    if g.dtype != meta.dtype:
                        g = g.to(meta.dtype)
                    dest = inbox.setdefault(nxt, {})
                    dest[nr] = dest[nr] + g if nr in dest else g
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(heap, (-nxt._sequence_nr(), next(tie), nxt))
    return tuple(captured[(e.node, e.output_nr)] for e in edges)
'''
