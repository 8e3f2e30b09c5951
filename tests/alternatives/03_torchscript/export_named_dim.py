"""A named Dim with a larger maximum, exported under torch.no_grad(), and train() restored afterwards."""
CELL = "export_classifier"
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    was_training = model.training
    model.train(False)
    try:
        n = torch.export.Dim("n", max=4096)
        with torch.no_grad():
            program = torch.export.export(model, args=(example,), dynamic_shapes=[{0: n}])
    finally:
        model.train(was_training)
    return program
'''
