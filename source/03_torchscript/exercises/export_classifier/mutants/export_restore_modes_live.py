"""Records and restores every submodule's mode but exports the live model: the program shares its weights, so training afterwards changes it."""
CELL = "export_classifier"
KIND = "state"
NOTE = "An exported program holds the model's parameters by reference: exporting the caller's own model, even with its modes restored, lets later training change the program's outputs."
FAILS = ["test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    modes = {m: m.training for m in model.modules()}
    try:
        model.eval()
        if example.shape[0] < 2:
            example = torch.cat([example, example])
        return torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
    finally:
        for m, was_training in modes.items():
            m.train(was_training)
'''
