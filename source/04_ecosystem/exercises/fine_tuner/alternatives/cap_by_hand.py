"""Loads the file by hand (strict=False minus the head, checked), torchvision Normalize, hand-built AdamW groups returned in a dict, a Trainer written out in full, metrics computed by hand."""
CELL = "fine_tuner"
SOURCE = '''
import timm.optim
import fnmatch
import torchvision.transforms.v2 as T2
from timm.data import resolve_model_data_config
from timm.loss import SoftTargetCrossEntropy


class FineTuner(L.LightningModule):
    """A timm model fine-tuned from local weights: the model's own normalisation, Mixup/CutMix, soft targets, AdamW groups."""

    def __init__(self, weights: str, arch: str, num_classes: int, lr: float = 1e-3, weight_decay: float = 0.05,
                 mix_seed: int = 0, **timm_kwargs):
        super().__init__()
        self.save_hyperparameters()
        self.model = timm.create_model(arch, pretrained=False, num_classes=num_classes, **timm_kwargs)
        state = torch.load(weights, map_location="cpu", weights_only=True)
        head = self.model.pretrained_cfg["classifier"]
        body = {k: v for k, v in state.items() if not k.startswith(head + ".")}
        missing, unexpected = self.model.load_state_dict(body, strict=False)
        assert not unexpected and all(k.startswith(head + ".") for k in missing), (missing, unexpected)
        cfg = resolve_model_data_config(self.model)
        self.normalize = T2.Normalize(mean=list(cfg["mean"]), std=list(cfg["std"]))
        self.mixup = E.LocalMixup(num_classes=num_classes, mixup_alpha=0.8, cutmix_alpha=1.0, label_smoothing=0.1,
                                  seed=mix_seed)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.model(self.normalize(images))

    def training_step(self, batch, batch_idx):
        x, y = batch
        x, soft = self.mixup(x, y)
        return SoftTargetCrossEntropy()(self.forward(x), soft)

    def configure_optimizers(self):
        skip = set(self.model.no_weight_decay()) if hasattr(self.model, "no_weight_decay") else set()
        decay, no_decay = [], []
        for name, p in self.model.named_parameters():
            exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in skip)
            (no_decay if exempt else decay).append(p)
        return {"optimizer": torch.optim.AdamW([{"params": no_decay, "weight_decay": 0.0},
                                                {"params": decay, "weight_decay": self.hparams.weight_decay}],
                                               lr=self.hparams.lr)}


def fine_tune(module, train_loader, val_images, val_labels, ckpt_path, max_steps):
    trainer = L.Trainer(accelerator="cpu", devices=1, precision="bf16-mixed", max_steps=max_steps, max_epochs=-1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(module, train_dataloaders=train_loader)
    trainer.save_checkpoint(ckpt_path)
    best = FineTuner.load_from_checkpoint(ckpt_path, map_location="cpu")
    best.eval()
    with torch.no_grad():
        logits = best(val_images).to(torch.float32)
        loss = torch.nn.functional.cross_entropy(logits, val_labels)
        correct = (logits.argmax(-1) == val_labels).sum()
    return best, {"val_loss": float(loss), "val_acc": float(correct) / len(val_labels)}
'''
