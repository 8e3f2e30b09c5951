"""Switches the caller's model to eval mode, then exports a deep copy: right outputs, but the caller's modes are lost."""
CELL = "export_for_serving"
KIND = "mutation"
NOTE = "model.eval() changes the caller's model: every submodule, a frozen one included, comes back in eval mode, and training resumed from it silently runs without dropout. Switch the copy, never the model you were given."
FAILS = ["test_serving_snapshot"]
SOURCE = '''
def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    class LogitsOf(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask)["logits"]

    model.eval()                                         # the caller's model, not a copy
    own = LogitsOf(copy.deepcopy(model))
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    return torch.export.export(own, (), {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes=shapes)
'''
