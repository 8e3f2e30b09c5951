"""Adam returned in a dict, NLL of a smoothed log_softmax by hand, epoch-level train_loss, accuracy as a sum / count, named save_hyperparameters."""
CELL = "lit_classifier"
SOURCE = '''
class LitClassifier(L.LightningModule):
    """A tiny MLP classifier for Lightning: label-smoothed training loss, val_loss/val_acc, probabilities from predict."""

    def __init__(self, in_features: int = 8, num_classes: int = 3, lr: float = 0.1, label_smoothing: float = 0.0):
        super().__init__()
        self.save_hyperparameters("in_features", "num_classes", "lr", "label_smoothing")
        self.model = E.tiny_mlp(in_features, num_classes)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logp = F.log_softmax(self(x), dim=-1)
        eps, k = self.hparams.label_smoothing, logp.shape[-1]
        loss = (1 - eps) * F.nll_loss(logp, y) - eps * logp.mean(dim=-1).mean()
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        correct = (logits.argmax(-1) == y).sum()
        self.log("val_acc", correct / y.numel(), prog_bar=True)
        self.log("val_loss", F.nll_loss(F.log_softmax(logits, -1), y))

    def predict_step(self, batch, batch_idx):
        x = batch[0]
        e = torch.exp(self(x) - self(x).amax(dim=1, keepdim=True))
        return e / e.sum(dim=1, keepdim=True)

    def configure_optimizers(self):
        return {"optimizer": torch.optim.Adam(self.parameters(), lr=self.hparams.lr)}
'''
