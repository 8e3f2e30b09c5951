"""Exports from the example as given: a 1-row example makes export specialise the batch to 1 and fail."""
CELL = "export_classifier"
KIND = "edge-case"
NOTE = "Export specialises a dimension whose example size is 1 (the 0/1 specialisation), so a 1-row example cannot give a dynamic batch; export needs an example whose batch size it can treat as symbolic."
FAILS = ["test_export_classifier_dynamic_batch"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    batch = Dim("batch", min=1, max=1024)
    return torch.export.export(copy.deepcopy(model).eval(), (example,), dynamic_shapes=({0: batch},))
'''
