"""Exports an eval-mode deep copy, keys dynamic_shapes by forward's real argument name, repeats a 1-row example."""
CELL = "export_classifier"
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    frozen = copy.deepcopy(model).eval()
    name = next(iter(inspect.signature(frozen.forward).parameters))
    if len(example) == 1:
        example = example.repeat(2, 1)
    rows = torch.export.Dim("rows", min=1, max=2048)
    return torch.export.export(frozen, args=(example,), dynamic_shapes={name: {0: rows}})
'''
