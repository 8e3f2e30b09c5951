"""Sets backbone.training = False by hand: only the top module's flag changes, its BatchNorm children stay in train mode."""
KIND = "state"
NOTE = "Setting the training attribute by hand changes only that one module's flag: its BatchNorm and dropout children keep theirs. Only the mode methods pass a mode down to every submodule."
CELL = "linear_probe"
FAILS = ["test_probe_train_mode"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
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
        self.backbone.eval()
''', '''
        self.backbone.training = False
'''),
('''
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
''', '''
    def forward(self, x):
'''),
]
