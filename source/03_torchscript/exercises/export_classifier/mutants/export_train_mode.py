"""Never switches to eval mode: dropout stays in the exported graph, so outputs are random."""
CELL = "export_classifier"
KIND = "graph"
NOTE = "Export captures what runs: a model exported in train mode keeps dropout in the graph, so the program does not give the eval-mode model's outputs."
FAILS = ["test_export_classifier_eval_outputs", "test_export_classifier_dynamic_batch", "test_export_classifier_leaves_model", "test_export_classifier_snapshot"]
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    if example.shape[0] < 2:
        example = torch.cat([example, example])
    return torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
'''
