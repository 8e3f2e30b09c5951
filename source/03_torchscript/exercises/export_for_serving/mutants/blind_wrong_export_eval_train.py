"""Switches the caller's model to eval() to copy it, then calls model.train(): submodules the caller had frozen in eval mode come back in train mode. (written blind, from the release alone)."""
CELL = 'export_for_serving'
KIND = 'edge-case'
NOTE = "model.train() after model.eval() does not restore what the caller had: it switches every submodule to train mode, a frozen one included. Work on a copy, or record and restore each submodule's flag."
FAILS = ['test_serving_snapshot']
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
    model.eval()                                   # export must see the eval-mode model
    served = _LogitsOnly(copy.deepcopy(model))
    model.train()                                  # the model arrived in train mode: put it back
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    return torch.export.export(served, (), {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes=shapes)
'''
