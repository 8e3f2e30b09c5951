"""Builds the backbone with its default 1000-class classifier and only skips it in forward: the classifier is not removed. (written blind, from the release alone)."""
CELL = 'linear_probe'
KIND = 'contract'
NOTE = "Skipping the classifier in forward is not removing it: the backbone still holds the old classifier's parameters, so its state_dict is not that of a classifier-free model."
FAILS = ['test_probe_values']
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, in_chans=in_chans, **timm_kwargs)   # keeps its head
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
        feats = self.backbone.forward_features(x)
        return self.head(self.backbone.forward_head(feats, pre_logits=True))   # stops before the old classifier
'''
