"""Calls loss.backward() inside training_step: Lightning's own backward then runs through a freed graph."""
CELL = "lit_classifier"
FAILS = ["test_lit_training_step", "test_lit_fit_accuracy", "test_lit_logged_keys"]
SOURCE = '''
class LitClassifier(L.LightningModule):
    """A tiny MLP classifier for Lightning; logs "train_loss" while training and "val_acc" while validating."""

    def __init__(self, in_features: int = 8, num_classes: int = 3, lr: float = 0.1):
        super().__init__()
        self.lr = lr
        self.model = E.tiny_mlp(in_features, num_classes)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        loss.backward()
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self(x).argmax(dim=1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)
'''
