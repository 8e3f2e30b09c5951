"""Logs val_acc as a percentage (100 * accuracy): the keys exist, the value is wrong."""
CELL = "lit_classifier"
FAILS = ["test_lit_logged_keys"]
SOURCE = '''
class LitClassifier(L.LightningModule):
    """A tiny MLP classifier for Lightning: label-smoothed training loss, val_loss/val_acc, probabilities from predict."""

    def __init__(self, in_features: int = 8, num_classes: int = 3, lr: float = 0.1, label_smoothing: float = 0.0):
        super().__init__()
        self.save_hyperparameters()
        self.model = E.tiny_mlp(in_features, num_classes)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y, label_smoothing=self.hparams.label_smoothing)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", 100 * (logits.argmax(dim=1) == y).float().mean())

    def predict_step(self, batch, batch_idx):
        return self(batch[0]).softmax(dim=1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
'''
