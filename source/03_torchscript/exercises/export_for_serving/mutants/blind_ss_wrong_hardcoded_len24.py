"""Hard-codes the length limit of the default TextConfig (24) instead of reading model.config.max_position_embeddings. (written blind, from the release alone)."""
CELL = 'export_for_serving'
KIND = 'overfit'
NOTE = "The longest sequence is a property of each model (the size of its position table, in its config), not the 24 of the example model: a fixed bound is wrong for a model that reads another number of positions."
FAILS = ['test_serving_shapes']
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
    wrapper = ServingWrapper(copy.deepcopy(model).eval())
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=24)          # the model's position table
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    return torch.export.export(wrapper, (), {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes=shapes)


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor
    torch._inductor.aoti_compile_and_package(program, package_path=path)
    return torch._inductor.aoti_load_package(path)
'''
