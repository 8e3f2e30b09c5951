"""Dim.AUTO by position on the model itself, the 1-row example expanded, every submodule's mode restored in finally."""
CELL = "export_classifier"
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    saved = [(m, m.training) for m in model.modules()]
    model.train(False)
    try:
        ex = example.expand(2, -1).contiguous() if example.shape[0] == 1 else example
        with torch.no_grad():
            return torch.export.export(model, (ex,), dynamic_shapes=[{0: Dim.AUTO, 1: Dim.STATIC}])
    finally:
        for m, mode in saved:
            m.training = mode
'''
