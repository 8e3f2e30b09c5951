"""Correct: export the live model in eval mode with modes recorded and restored submodule by submodule, then take the snapshot by a torch.export save/load round trip (own tensors); a 1-row example is repeated to 2 rows. (written blind, from the release alone)."""
CELL = 'export_classifier'
SOURCE = '''
def export_classifier(model: nn.Module, example: Tensor) -> torch.export.ExportedProgram:
    """Export `model` for inference (eval mode) with a dynamic batch dimension; return the ExportedProgram."""
    if example.shape[0] < 2:                       # 0/1 specialisation: export from at least 2 rows
        example = example.repeat(2, 1)
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        live = torch.export.export(model, (example,),
                                   dynamic_shapes=({0: Dim("batch", min=1, max=1024)},))
    finally:
        for m, flag in modes.items():              # every submodule back to its own mode
            m.training = flag
    buffer = io.BytesIO()                          # the live program shares the weights: a file holds values
    torch.export.save(live, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)
'''
