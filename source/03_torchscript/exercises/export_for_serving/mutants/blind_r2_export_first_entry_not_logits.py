"""Returns the FIRST entry of the model's output mapping instead of its "logits" entry (right only when logits comes first)."""
CELL = "export_for_serving"
KIND = "overfit"
NOTE = "A model's output mapping is read by key: its first entry is not necessarily the logits (a loss or other outputs may come first), so the logits entry has to be picked by its name."
FAILS = ["test_serving_logits"]
VIOLATES = "returns a mapping (a `dict`, or a transformers `ModelOutput`) whose `\"logits\"` entry is a `(batch, num_labels)` tensor ... that returns the **logits tensor** itself"
SOURCE = '''
def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    class FirstOutput(nn.Module):
        """Works for a dict and for a ModelOutput alike (loss is None at inference, so logits is the first value)."""

        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
            return next(iter(out.values()))

    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    return torch.export.export(FirstOutput(copy.deepcopy(model)).eval(), (),
                               {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes={"input_ids": {0: batch, 1: length},
                                               "attention_mask": {0: batch, 1: length}})
'''
