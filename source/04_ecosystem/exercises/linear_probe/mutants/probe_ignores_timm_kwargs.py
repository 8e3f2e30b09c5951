"""Drops **timm_kwargs: a ViT is built for 224 px instead of img_size=32, a ConvNeXt with its default depths."""
KIND = "contract"
NOTE = "The constructor's arguments describe the backbone to build: dropping in_chans or the extra timm keywords (img_size, depth, ...) builds a different model from the one asked for."
CELL = "linear_probe"
FAILS = ["test_probe_shapes", "test_probe_values"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
''', '''
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans)
'''),
('''
        width = getattr(self.backbone, "head_hidden_size", None) or self.backbone.num_features
        self.head = nn.Linear(width, num_classes)
''', '''
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)
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
