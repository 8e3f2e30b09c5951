"""Turns off only the nn.Dropout submodules of the copy instead of calling .eval(): code that tests a module's own `self.training` (BERT's attention dropout) stays in train mode. (written blind, from the release alone)."""
CELL = 'export_for_serving'
KIND = 'wrong-value'
NOTE = "Inference means the whole model in eval mode, not only its Dropout layers switched off: a model's own code may read self.training (as BERT's attention dropout does), and it still sees training mode."
FAILS = ['test_serving_logits']
SOURCE = '''
from typing import Callable


class ServingWrapper(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask)["logits"]


def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    snapshot = copy.deepcopy(model)
    for m in snapshot.modules():
        if isinstance(m, nn.Dropout):
            m.eval()                                # inference: no dropout
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    return torch.export.export(ServingWrapper(snapshot), (),
                               {"input_ids": input_ids, "attention_mask": attention_mask}, dynamic_shapes=shapes)


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor
    torch._inductor.aoti_compile_and_package(program, package_path=path)
    return torch._inductor.aoti_load_package(path)
'''
