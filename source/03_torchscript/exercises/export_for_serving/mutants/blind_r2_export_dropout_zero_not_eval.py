"""Turns dropout off by setting every nn.Dropout's p to 0 on a copy instead of calling eval(): code that reads self.training still takes the training path."""
CELL = "export_for_serving"
KIND = "edge-case"
NOTE = "Inference means the whole model in eval mode, not only its Dropout layers switched off: a model's own code may read self.training (as BERT's attention dropout does), and it still sees training mode."
FAILS = ["test_serving_logits"]
VIOLATES = "equal to the eval-mode model's logits (the logits of `model.eval()`: the model's own code may read `self.training`, as BERT's attention dropout does)."
SOURCE = '''
def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    served = copy.deepcopy(model)               # a snapshot: training the caller's model cannot reach it
    for m in served.modules():                  # inference = no dropout
        if isinstance(m, nn.Dropout):
            m.p = 0.0

    class Logits(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask)["logits"]

    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    return torch.export.export(Logits(served), (), {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes={"input_ids": {0: batch, 1: length},
                                               "attention_mask": {0: batch, 1: length}})
'''
