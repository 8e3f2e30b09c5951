"""Correct: a logits-only wrapper class defined inside the function around a deep copy switched with train(False); kwargs with one shared per-input dim spec; the caller's model is never touched. (written blind, from the release alone)."""
CELL = 'export_for_serving'
SOURCE = '''
def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""

    class Logits(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
            return out["logits"]

    snapshot = copy.deepcopy(model)
    snapshot.train(False)                  # every submodule of the COPY in eval mode
    rows = Dim("rows", min=1, max=64)
    cols = Dim("cols", min=2, max=int(getattr(model.config, "max_position_embeddings")))
    both = {0: rows, 1: cols}
    example = {"input_ids": input_ids, "attention_mask": attention_mask}
    return torch.export.export(Logits(snapshot), args=(), kwargs=example, dynamic_shapes={name: both for name in example})
'''
