"""Makes only the batch dynamic: the sequence length is specialised to the example's."""
CELL = "export_for_serving"
KIND = "edge-case"
NOTE = "Only the batch is dynamic here: torch.export specialises the sequence length to the example's, so every other length is rejected. Each input dimension that varies must be declared dynamic."
FAILS = ["test_serving_shapes"]
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
    shapes = {"input_ids": {0: batch}, "attention_mask": {0: batch}}
    return torch.export.export(LogitsOf(copy.deepcopy(model).eval()), (),
                               {"input_ids": input_ids, "attention_mask": attention_mask}, dynamic_shapes=shapes)


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    torch._inductor.aoti_compile_and_package(program, package_path=str(path))
    return torch._inductor.aoti_load_package(str(path))
'''
