"""Exports in train mode: dropout stays active in the program, so outputs differ from the eval-mode model."""
CELL = "export_classifier"
FAILS = ["test_export_classifier_eval_outputs", "test_export_classifier_dynamic_batch"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    batch = Dim("batch", min=1, max=1024)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})
'''
