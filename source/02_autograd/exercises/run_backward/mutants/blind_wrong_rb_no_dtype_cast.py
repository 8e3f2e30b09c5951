"""Sums broadcast gradients down to the slot's shape but never casts to the slot's dtype (mixed float32/float64 graphs return the wrong dtype). (written blind, from the release alone)."""
CELL = 'run_backward'
KIND = 'wrong-value'
NOTE = "A slot expects its input's dtype: a gradient computed in another dtype must be cast back, as the engine does, or the result has the wrong dtype."
FAILS = ['test_run_backward_scalar']
SOURCE = '''
import torch
from torch.autograd.graph import get_gradient_edge


def run_backward(outputs, inputs, grad_outputs=None):
    """Return the gradients of outputs with respect to each of inputs, like torch.autograd.grad(..., allow_unused=True):
    a tuple, one entry per input (None where no gradient reaches it), computed by calling the graph's nodes."""
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
        if grad_outputs is not None and not isinstance(grad_outputs, (list, tuple)):
            grad_outputs = [grad_outputs]
    outputs = list(outputs)
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
    inputs = list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, torch.Tensor):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)

    with torch.no_grad():
        # seeds
        seeds = []
        for out, g in zip(outputs, grad_outputs):
            if g is None:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                g = torch.ones_like(out)
            seeds.append((out.grad_fn, out.output_nr, g))

        # dependency counts (explicit stack)
        deps = {}
        seen = set()
        stack = list(dict.fromkeys(out.grad_fn for out in outputs))   # each output node once
        for n in stack:
            seen.add(n)
        while stack:
            node = stack.pop()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

        wanted = {}
        for i, t in enumerate(inputs):
            edge = get_gradient_edge(t)
            wanted.setdefault((edge.node, edge.output_nr), []).append(i)

        buffers = {}
        for node, slot, g in seeds:
            key = (node, slot)
            buffers[key] = g if key not in buffers else buffers[key] + g

        result = [None] * len(inputs)
        ready = [n for n in dict.fromkeys(out.grad_fn for out in outputs) if deps.get(n, 0) == 0]
        while ready:
            node = ready.pop()
            nslots = len(node._input_metadata)
            grads = [buffers.pop((node, s), None) for s in range(nslots)]
            for s, g in enumerate(grads):
                for i in wanted.get((node, s), ()):
                    if g is not None:
                        result[i] = g.clone()
            is_acc = type(node).__name__ == "AccumulateGrad"
            if is_acc or all(g is None for g in grads):
                sent = [None] * len(node.next_functions)
            else:
                sent = node(*grads)
                if isinstance(sent, torch.Tensor) or sent is None:
                    sent = (sent,)
            for (nxt, nr), g in zip(node.next_functions, sent):
                if nxt is None:
                    continue
                if g is not None:
                    meta = nxt._input_metadata[nr]
                    if tuple(g.shape) != tuple(meta.shape):
                        g = g.sum_to_size(meta.shape)
                    key = (nxt, nr)
                    buffers[key] = g if key not in buffers else buffers[key] + g
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    ready.append(nxt)
    return tuple(result)
'''
