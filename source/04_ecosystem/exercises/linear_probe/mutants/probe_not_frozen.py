"""Puts the backbone in eval mode but never freezes it: its parameters still require grad (the no_grad forward hides it from backward)."""
KIND = "graph"
NOTE = "Eval mode and no_grad do not freeze a module: its parameters still have requires_grad=True. Freezing means turning gradient tracking off on the backbone's parameters themselves."
CELL = "linear_probe"
FAILS = ["test_probe_frozen"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        self.backbone.requires_grad_(False)
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
