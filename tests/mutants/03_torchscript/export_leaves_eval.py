"""Calls model.eval() on the caller's model and never switches it back: training would go on without dropout."""
CELL = "export_classifier"
FAILS = ["test_export_classifier_leaves_model"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    model.eval()
    if example.shape[0] < 2:
        example = torch.cat([example, example])
    return torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
'''
