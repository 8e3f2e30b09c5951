"""Adam returned in a dict, NLL of log_softmax as the loss, epoch-level train_loss, accuracy as a sum / count."""
CELL = "lit_classifier"
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
        loss = F.nll_loss(F.log_softmax(self(x), dim=-1), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        correct = (self(x).argmax(-1) == y).sum()
        self.log("val_acc", correct / y.numel(), prog_bar=True)

    def configure_optimizers(self):
        return {"optimizer": torch.optim.Adam(self.parameters(), lr=self.lr)}
'''
