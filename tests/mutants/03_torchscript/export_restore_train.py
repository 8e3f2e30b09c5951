"""Restores the mode with model.train(): a frozen BatchNorm is switched back to training, an eval model too."""
CELL = "export_classifier"
KIND = "mutation"
FAILS = ["test_export_classifier_leaves_model", "test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    model.eval()
    try:
        if example.shape[0] < 2:
            example = torch.cat([example, example])
        return torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
    finally:
        model.train()
'''
