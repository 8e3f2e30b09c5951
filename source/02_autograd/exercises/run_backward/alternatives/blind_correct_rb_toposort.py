"""Correct: reverse post-order of an iterative DFS as the schedule, lists of arrivals summed when a node runs, AccumulateGrad recognised by having no next_functions. (written blind, from the release alone)."""
CELL = 'run_backward'
SOURCE = '''
import collections
import torch


def run_backward(outputs, inputs, grad_outputs=None):
    """Return the gradients of outputs with respect to each of inputs, like torch.autograd.grad(..., allow_unused=True):
    a tuple, one entry per input (None where no gradient reaches it), computed by calling the graph's nodes."""
    outs = [outputs] if torch.is_tensor(outputs) else list(outputs)
    ins = [inputs] if torch.is_tensor(inputs) else list(inputs)
    if grad_outputs is None or torch.is_tensor(grad_outputs):
        gos = [grad_outputs] + [None] * (len(outs) - 1)
    else:
        gos = list(grad_outputs)

    # reverse post-order of an iterative DFS = every node after all nodes that send it something
    order, state = [], {}
    for root in (o.grad_fn for o in outs):
        if root in state:
            continue
        state[root] = 1
        work = [(root, iter(root.next_functions))]
        while work:
            node, it = work[-1]
            for nxt, _ in it:
                if nxt is not None and nxt not in state:
                    state[nxt] = 1
                    work.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                work.pop()
                order.append(node)
    order.reverse()

    arrived = collections.defaultdict(list)          # (node, slot) -> gradients, summed when read
    with torch.no_grad():
        for o, g in zip(outs, gos):
            if g is None:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                g = torch.ones_like(o)
            arrived[(o.grad_fn, o.output_nr)].append(g)
        slot_of = []
        for t in ins:
            if t.grad_fn is None:
                slot_of.append((torch.autograd.graph.get_gradient_edge(t).node, 0))
            else:
                slot_of.append((t.grad_fn, t.output_nr))
        wanted = set(slot_of)
        got = {}
        for node in order:
            grads = []
            for s in range(len(node._input_metadata)):
                parts = arrived.pop((node, s), [])
                g = None
                for p in parts:
                    g = p if g is None else g + p
                grads.append(g)
                if (node, s) in wanted and g is not None:
                    got[(node, s)] = g
            if not node.next_functions or all(g is None for g in grads):
                continue                                   # AccumulateGrad (no next functions), or nothing reached it
            res = node(*grads)
            res = (res,) if not isinstance(res, tuple) else res
            for (nxt, nr), g in zip(node.next_functions, res):
                if nxt is not None and g is not None:
                    md = nxt._input_metadata[nr]
                    arrived[(nxt, nr)].append(g.sum_to_size(md.shape).to(md.dtype))
        return tuple(None if k not in got else got[k].clone() for k in slot_of)
'''
