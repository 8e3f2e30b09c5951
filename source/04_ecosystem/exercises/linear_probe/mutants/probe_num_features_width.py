"""Head width from num_features: right for ResNet/ConvNeXt/ViT, wrong for MambaOut (head_hidden_size 256, num_features 64)."""
KIND = "overfit"
NOTE = "The pooled pre-logit width is not always num_features: some backbones' heads widen the features before the classifier (MambaOut does), so the new head must take the width of the pre-logit features."
CELL = "linear_probe"
FAILS = ["test_probe_shapes", "test_probe_values"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        width = getattr(self.backbone, "head_hidden_size", None) or self.backbone.num_features
        self.head = nn.Linear(width, num_classes)
''', '''
        self.head = nn.Linear(self.backbone.num_features, num_classes)
'''),
('''
        """Set the mode of the module and its head; the backbone stays in eval mode. Return self."""
''', ''),
('''
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
''', '''
    def forward(self, x):
'''),
]
