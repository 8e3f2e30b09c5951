"""Returns None: no program at all (a do-nothing answer must score 0)."""
CELL = "export_for_serving"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder instead of an exported program."
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
    return None


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    torch._inductor.aoti_compile_and_package(program, package_path=str(path))
    return torch._inductor.aoti_load_package(str(path))
'''
