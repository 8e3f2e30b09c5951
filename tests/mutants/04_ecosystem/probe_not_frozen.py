"""Puts the backbone in eval mode but never freezes it: its parameters still require grad (the no_grad forward hides it from backward)."""
KIND = "graph"
NOTE = "Eval mode and no_grad do not freeze a module: its parameters still have requires_grad=True. Freezing means turning gradient tracking off on the backbone's parameters themselves."
CELL = "linear_probe"
FAILS = ["test_probe_frozen"]
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)
        self.train()

    def train(self, mode: bool = True):
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        with torch.no_grad():
            features = self.backbone.forward_head(self.backbone.forward_features(x), pre_logits=True)
        return self.head(features)
'''
