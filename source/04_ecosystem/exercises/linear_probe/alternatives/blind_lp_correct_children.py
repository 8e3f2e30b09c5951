"""Correct: backbone(x) of a num_classes=0 model is the pooled pre-logit vector; train() sets each child's mode itself. (written blind, from the release alone)."""
CELL = 'linear_probe'
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        backbone = timm.create_model(arch, pretrained=False, in_chans=in_chans, **{**timm_kwargs, "num_classes": 0})
        for p in backbone.parameters():
            p.requires_grad = False
        self.backbone = backbone
        self.head = nn.Linear(backbone.head_hidden_size, num_classes)
        self.train(True)

    def train(self, mode: bool = True):
        """Set the mode of the module and its head; the backbone stays in eval mode. Return self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for name, child in self.named_children():
            child.train(mode and name != "backbone")
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
        return self.head(self.backbone(x))   # num_classes=0: model(x) stops at the pre-logits
'''
