"""Hard-codes mean = std = 0.5 (the visible ViT's numbers) instead of reading the model's own data config. (written blind, from the release alone)."""
CELL = 'fine_tuner'
KIND = 'overfit'
NOTE = "Normalisation belongs to the weights: the mean and std come from each model's own data config, and fixed numbers (ImageNet's, or one model's) are wrong for models trained with other ones."
FAILS = ['test_capstone_build']
SOURCE = '''
import timm.optim
from timm.data import resolve_model_data_config
from timm.loss import SoftTargetCrossEntropy


class FineTuner(L.LightningModule):
    """A timm model fine-tuned from local weights: the model's own normalisation, Mixup/CutMix, soft targets, AdamW groups."""

    def __init__(self, weights: str, arch: str, num_classes: int, lr: float = 1e-3, weight_decay: float = 0.05,
                 mix_seed: int = 0, **timm_kwargs):
        super().__init__()
        self.save_hyperparameters()
        self.model = timm.create_model(arch, pretrained=True, pretrained_cfg_overlay=dict(file=weights),
                                       num_classes=num_classes, **timm_kwargs)
        cfg = resolve_model_data_config(self.model)
        # this ViT's config says mean = std = 0.5
        self.register_buffer("mean", torch.full((1, 3, 1, 1), 0.5), persistent=False)
        self.register_buffer("std", torch.full((1, 3, 1, 1), 0.5), persistent=False)
        self.mixup = E.LocalMixup(num_classes, seed=mix_seed)
        self.loss_fn = SoftTargetCrossEntropy()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits of images in [0, 1], normalised with the model's own mean and std."""
        return self.model((images - self.mean) / self.std)

    def training_step(self, batch, batch_idx):
        """Return SoftTargetCrossEntropy of the Mixup/CutMix batch (self.mixup) against its soft targets."""
        images, labels = batch
        mixed, targets = self.mixup(images, labels)
        return self.loss_fn(self(mixed), targets)

    def configure_optimizers(self):
        """Return AdamW over self.model's parameters: lr, weight_decay, and 0 for timm's exempt parameters."""
        return timm.optim.create_optimizer_v2(self.model, opt="adamw", lr=self.hparams.lr,
                                              weight_decay=self.hparams.weight_decay)


def fine_tune(module: FineTuner, train_loader, val_images: torch.Tensor, val_labels: torch.Tensor,
              ckpt_path: str, max_steps: int) -> tuple[FineTuner, dict]:
    """Train `module` (bf16-mixed, max_steps steps), save to ckpt_path, reload it with load_from_checkpoint, evaluate it."""
    trainer = L.Trainer(**E.trainer_kwargs(max_epochs=-1, max_steps=max_steps, precision="bf16-mixed"))
    trainer.fit(module, train_loader)
    trainer.save_checkpoint(ckpt_path)
    reloaded = FineTuner.load_from_checkpoint(ckpt_path, map_location="cpu").eval()
    with torch.no_grad():
        logits = reloaded(val_images).float()
    return reloaded, {"val_loss": F.cross_entropy(logits, val_labels).item(),
                      "val_acc": (logits.argmax(1) == val_labels).float().mean().item()}
'''
