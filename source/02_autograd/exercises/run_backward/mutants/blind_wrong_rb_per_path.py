"""Pushes each arriving gradient straight on (no dependency counts, no summing): right values by linearity, but a node runs once per path (exponential on diamond ladders). (written blind, from the release alone)."""
CELL = 'run_backward'
KIND = 'graph'
NOTE = 'Passing each gradient on as it arrives gives the right sum but runs a node once per path: on a ladder of diamonds that is exponential work. Wait until every sender has delivered.'
FAILS = ['test_run_backward_own_engine']
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
    wanted = {}
    for i, t in enumerate(inputs):
        e = get_gradient_edge(t)
        wanted.setdefault((e.node, e.output_nr), []).append(i)
    result = [None] * len(inputs)
    with torch.no_grad():
        # push every gradient along every path (by linearity the sums come out right)
        stack = []
        for out, g in zip(outputs, grad_outputs):
            if g is None:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                g = torch.ones_like(out)
            stack.append((out.grad_fn, out.output_nr, g))
        while stack:
            node, slot, g = stack.pop()
            for i in wanted.get((node, slot), ()):
                result[i] = g.clone() if result[i] is None else result[i] + g
            if type(node).__name__ == "AccumulateGrad":
                continue
            grads = [None] * len(node._input_metadata)
            grads[slot] = g
            sent = node(*grads)
            if isinstance(sent, torch.Tensor) or sent is None:
                sent = (sent,)
            for (nxt, nr), s in zip(node.next_functions, sent):
                if nxt is None or s is None:
                    continue
                meta = nxt._input_metadata[nr]
                s = s.sum_to_size(meta.shape).to(meta.dtype)
                stack.append((nxt, nr, s))
    return tuple(result)
'''
