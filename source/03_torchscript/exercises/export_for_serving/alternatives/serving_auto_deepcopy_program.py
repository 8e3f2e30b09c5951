"""Dim.AUTO for both dimensions (export infers the length's range from the model), then a deep copy of the program as the snapshot."""
CELL = "export_for_serving"
SOURCE = '''
from typing import Callable


def export_for_serving(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference: keyword inputs, the logits tensor out, dynamic batch and length, a snapshot."""
    class Serve(nn.Module):
        def __init__(self, m: nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            out = self.m(input_ids=input_ids, attention_mask=attention_mask)
            return out["logits"]

    was = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        auto = {0: Dim.AUTO(min=1, max=64), 1: Dim.AUTO}
        program = torch.export.export(Serve(model), (), {"input_ids": input_ids, "attention_mask": attention_mask},
                                      dynamic_shapes={"input_ids": auto, "attention_mask": auto})
    finally:
        for m, flag in was:
            m.train(flag)
    return copy.deepcopy(program)


def package_for_serving(program: torch.export.ExportedProgram, path: str) -> Callable:
    """Compile `program` with AOTInductor into the package `path`; return the loaded package."""
    from course import deploy as _deploy
    _deploy.aoti_package(program, path)
    return torch._inductor.aoti_load_package(str(path))
'''
