"""Replaces model.fc by hand: works for ResNets only (ConvNeXt: head.fc, ViT: head, MobileNetV3: classifier)."""
CELL = "build_classifier"
FAILS = ["test_build_classifier_shapes", "test_build_classifier_in_chans", "test_build_classifier_param_count"]
SOURCE = '''
def build_classifier(arch: str, num_classes: int, in_chans: int = 3) -> nn.Module:
    """Return the timm model `arch` (random init) with a `num_classes`-way head and an `in_chans`-channel stem."""
    model = timm.create_model(arch, pretrained=False, in_chans=in_chans)
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    return model
'''
