"""Dim.AUTO on a deep copy put in eval mode (the caller's model is left untouched), tuple-form dynamic_shapes."""
CELL = "export_classifier"
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    inference_model = copy.deepcopy(model).eval()
    return torch.export.export(inference_model, (example,), dynamic_shapes=({0: Dim.AUTO, 1: Dim.STATIC},))
'''
