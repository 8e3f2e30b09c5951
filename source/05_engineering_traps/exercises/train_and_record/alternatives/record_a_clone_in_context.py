"""Uses a context manager that owns the handle, clones the output under no_grad, and concatenates with torch.cat at the end."""
CELL = "train_and_record"
SOURCE = '''
import contextlib

@contextlib.contextmanager
def _recording(module, sink):
    def hook(mod, args, out):
        with torch.no_grad():
            sink.append(out.clone())
    h = module.register_forward_hook(hook)
    try:
        yield sink
    finally:
        h.remove()

def train_and_record(model, loader, optimizer, layer):
    losses = []
    with _recording(layer, []) as seen:
        for batch in loader:
            x, y = batch
            optimizer.zero_grad(set_to_none=True)
            out = model(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            optimizer.step()
            losses.append(float(loss))
    return losses, torch.cat(seen, dim=0)
'''
