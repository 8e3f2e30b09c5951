"""Sets backbone.training = False by hand: only the top module's flag changes, its BatchNorm children stay in train mode."""
KIND = "state"
NOTE = "Setting the training attribute by hand changes only that one module's flag: its BatchNorm and dropout children keep theirs. Only the mode methods pass a mode down to every submodule."
CELL = "linear_probe"
FAILS = ["test_probe_train_mode"]
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)
        self.train()

    def train(self, mode: bool = True):
        super().train(mode)
        self.backbone.training = False
        return self

    def forward(self, x):
        with torch.no_grad():
            features = self.backbone.forward_head(self.backbone.forward_features(x), pre_logits=True)
        return self.head(features)
'''
