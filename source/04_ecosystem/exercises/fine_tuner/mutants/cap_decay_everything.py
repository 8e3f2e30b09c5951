"""torch.optim.AdamW(self.parameters(), weight_decay=...): biases, norms, pos_embed and cls_token are decayed too."""
KIND = "wrong-value"
NOTE = "One weight decay for every parameter also decays biases, norms and a ViT's position embedding and class token, which timm's rule exempts."
CELL = "fine_tuner"
FAILS = ['test_capstone_optimizer', 'test_capstone_fit']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        return timm.optim.create_optimizer_v2(self.model, opt="adamw", lr=self.hparams.lr,
                                              weight_decay=self.hparams.weight_decay)
''', '''
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
'''),
]
