"""Forgets to pass in_chans and **timm_kwargs to timm.create_model: only the default 3-channel, default-size model works. (written blind, from the release alone)."""
CELL = 'linear_probe'
KIND = 'contract'
NOTE = "The constructor's arguments describe the backbone to build: dropping in_chans or the extra timm keywords (img_size, depth, ...) builds a different model from the one asked for."
FAILS = ['test_probe_shapes', 'test_probe_values']
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.in_chans, self.timm_kwargs = in_chans, timm_kwargs      # recorded, but never used below
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0)
        self.backbone.requires_grad_(False)
        self.backbone.eval()
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)

    def train(self, mode: bool = True):
        """Set the mode of the module and its head; the backbone stays in eval mode. Return self."""
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
        return self.head(self.backbone.forward_head(self.backbone.forward_features(x), pre_logits=True))
'''
