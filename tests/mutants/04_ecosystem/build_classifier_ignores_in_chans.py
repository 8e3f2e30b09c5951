"""Ignores in_chans: the stem always expects 3 channels."""
CELL = "build_classifier"
FAILS = ["test_build_classifier_in_chans"]
SOURCE = '''
def build_classifier(arch: str, num_classes: int, in_chans: int = 3) -> nn.Module:
    """Return the timm model `arch` (random init) with a `num_classes`-way head and an `in_chans`-channel stem."""
    return timm.create_model(arch, pretrained=False, num_classes=num_classes)
'''
