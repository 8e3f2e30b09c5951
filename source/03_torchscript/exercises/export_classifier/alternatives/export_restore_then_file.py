"""Exports the live model in eval mode with its modes restored, then takes the snapshot through a save/load round trip in memory."""
CELL = "export_classifier"
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    import io
    saved = [(m, m.training) for m in model.modules()]
    model.train(False)
    try:
        ex = example.expand(2, -1).contiguous() if example.shape[0] == 1 else example
        program = torch.export.export(model, (ex,), dynamic_shapes=[{0: Dim.AUTO, 1: Dim.STATIC}])
    finally:
        for m, mode in saved:
            m.training = mode
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)
'''
