"""No dynamic_shapes: the batch size is specialised to the example's, other batch sizes are rejected."""
CELL = "export_classifier"
KIND = "edge-case"
NOTE = "Without dynamic shapes, torch.export specialises every dimension to the example's size, so the program rejects every other batch size."
FAILS = ["test_export_classifier_dynamic_batch"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    return torch.export.export(copy.deepcopy(model).eval(), (example,))
'''
