"""Correct: a logits-only wrapper around the caller's model, exported in eval mode with every submodule's mode restored afterwards, and made a snapshot by a torch.export save/load round trip; the length's max read from the config; AOTInductor compile + load. (written blind, from the release alone)."""
CELL = 'export_for_serving'
SOURCE = '''
from typing import Callable


class _LogitsOnly(nn.Module):
    """Calls the wrapped model with keywords and returns the logits tensor alone."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask)["logits"]


def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    batch = Dim("batch", min=1, max=64)
    length = Dim("length", min=2, max=model.config.max_position_embeddings)
    shapes = {"input_ids": {0: batch, 1: length}, "attention_mask": {0: batch, 1: length}}
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        live = torch.export.export(_LogitsOnly(model).eval(), (),
                                   {"input_ids": input_ids, "attention_mask": attention_mask},
                                   dynamic_shapes=shapes)
    finally:
        for m, flag in modes.items():
            m.training = flag
    buffer = io.BytesIO()                 # through a file: the loaded program owns copies of the weights
    torch.export.save(live, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    import torch._inductor
    package = torch._inductor.aoti_compile_and_package(program, package_path=path)
    return torch._inductor.aoti_load_package(package)
'''
