"""Correct: the data config kept as plain tuples and applied with torchvision's normalize; hand-built AdamW groups (fnmatch). (written blind, from the release alone)."""
CELL = 'fine_tuner'
SOURCE = '''
import fnmatch
import timm.optim
from timm.data import resolve_model_data_config
from timm.loss import SoftTargetCrossEntropy
from torchvision.transforms.v2 import functional as TF


class FineTuner(L.LightningModule):
    """A timm model fine-tuned from local weights: the model's own normalisation, Mixup/CutMix, soft targets, AdamW groups."""

    def __init__(self, weights: str, arch: str, num_classes: int, lr: float = 1e-3, weight_decay: float = 0.05,
                 mix_seed: int = 0, **timm_kwargs):
        super().__init__()
        self.save_hyperparameters()            # weights, arch, num_classes, lr, weight_decay, mix_seed and timm_kwargs
        hp = self.hparams
        self.model = timm.create_model(hp.arch, pretrained=True, num_classes=hp.num_classes,
                                       pretrained_cfg_overlay={"file": hp.weights}, **timm_kwargs)
        data_cfg = resolve_model_data_config(self.model)
        self.norm_mean = [float(v) for v in data_cfg["mean"]]
        self.norm_std = [float(v) for v in data_cfg["std"]]
        self.mixup = E.LocalMixup(hp.num_classes, seed=hp.mix_seed)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits of images in [0, 1], normalised with the model's own mean and std."""
        return self.model(TF.normalize(images, self.norm_mean, self.norm_std))

    def training_step(self, batch, batch_idx):
        """Return SoftTargetCrossEntropy of the Mixup/CutMix batch (self.mixup) against its soft targets."""
        images, labels = batch
        mixed, soft = self.mixup(images, labels)
        logits = self(mixed)
        return SoftTargetCrossEntropy()(logits, soft)

    def configure_optimizers(self):
        """Return AdamW over self.model's parameters: lr, weight_decay, and 0 for timm's exempt parameters."""
        patterns = self.model.no_weight_decay() if hasattr(self.model, "no_weight_decay") else ()
        decay, no_decay = [], []
        for name, p in self.model.named_parameters():
            exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in patterns)
            (no_decay if exempt else decay).append(p)
        return torch.optim.AdamW([{"params": decay, "weight_decay": self.hparams.weight_decay},
                                  {"params": no_decay, "weight_decay": 0.0}], lr=self.hparams.lr)


def fine_tune(module: FineTuner, train_loader, val_images: torch.Tensor, val_labels: torch.Tensor,
              ckpt_path: str, max_steps: int) -> tuple[FineTuner, dict]:
    """Train `module` (bf16-mixed, max_steps steps), save to ckpt_path, reload it with load_from_checkpoint, evaluate it."""
    kw = E.trainer_kwargs(max_epochs=-1, precision="bf16-mixed", limit_val_batches=0)
    kw["max_steps"] = max_steps
    trainer = L.Trainer(**kw)
    trainer.fit(module, train_dataloaders=train_loader)
    trainer.save_checkpoint(ckpt_path)
    back = FineTuner.load_from_checkpoint(ckpt_path, map_location=torch.device("cpu"))
    back.eval()
    with torch.inference_mode():
        logits = back(val_images).to(torch.float32)
        val_loss = float(F.cross_entropy(logits, val_labels))
        val_acc = float((logits.argmax(dim=1) == val_labels).sum()) / len(val_labels)
    return back, {"val_loss": val_loss, "val_acc": val_acc}
'''
