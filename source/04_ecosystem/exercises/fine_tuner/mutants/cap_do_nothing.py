"""Do-nothing: builds nothing, returns None from every step and the module itself from fine_tune; every grade cell of Exercise 4.4 must fail."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: the module builds no model and its methods return placeholders."
CELL = "fine_tuner"
FAILS = ['test_capstone_build', 'test_capstone_optimizer', 'test_capstone_training_step', 'test_capstone_fit']
SOURCE = '''
import timm.optim
from timm.data import resolve_model_data_config
from timm.loss import SoftTargetCrossEntropy


class FineTuner(L.LightningModule):
    """A timm model fine-tuned from local weights: the model's own normalisation, Mixup/CutMix, soft targets, AdamW groups."""

    def __init__(self, weights: str, arch: str, num_classes: int, lr: float = 1e-3, weight_decay: float = 0.05,
                 mix_seed: int = 0, **timm_kwargs):
        super().__init__()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return images

    def training_step(self, batch, batch_idx):
        pass

    def configure_optimizers(self):
        pass


def fine_tune(module, train_loader, val_images, val_labels, ckpt_path, max_steps):
    return module, {}
'''
