"""Exports the model itself: the program returns the model's dictionary, not the logits tensor."""
CELL = "export_for_serving"
KIND = "contract"
NOTE = "The program returns whatever the exported module's forward returns: exporting the model itself gives back its whole output mapping, while the caller needs the logits tensor."
FAILS = ["test_serving_logits", "test_serving_shapes", "test_serving_snapshot"]
SOURCE = '''
from typing import Callable


class LogitsOf(nn.Module):
    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        return self.inner(input_ids=input_ids, attention_mask=attention_mask)["logits"]


def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    return torch.export.export(copy.deepcopy(model).eval(), (), {"input_ids": input_ids, "attention_mask": attention_mask},
                               dynamic_shapes=shapes)


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    torch._inductor.aoti_compile_and_package(program, package_path=str(path))
    return torch._inductor.aoti_load_package(str(path))
'''
