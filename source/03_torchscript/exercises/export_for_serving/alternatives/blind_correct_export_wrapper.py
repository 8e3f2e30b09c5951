"""Correct: a wrapper around an eval-mode deep copy returns the logits; Dims for batch 1-64 and length 2-max_position_embeddings. (written blind, from the release alone)."""
CELL = 'export_for_serving'
SOURCE = '''
class _LogitsOnly(nn.Module):
    """Serving wrapper: keyword inputs in, the logits tensor out."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask)["logits"]


def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    served = _LogitsOnly(copy.deepcopy(model).eval())
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    return torch.export.export(served, (), {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes=shapes)
'''
