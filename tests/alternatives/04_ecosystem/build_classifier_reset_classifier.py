"""Builds the model with timm's default head, then swaps it with model.reset_classifier(num_classes)."""
CELL = "build_classifier"
SOURCE = '''
def build_classifier(arch: str, num_classes: int, in_chans: int = 3) -> nn.Module:
    """Return the timm model `arch` (random init) with a `num_classes`-way head and an `in_chans`-channel stem."""
    model = timm.create_model(arch, pretrained=False, in_chans=in_chans)
    model.reset_classifier(num_classes)
    return model
'''
