"""Calls torch.manual_seed(0) "for reproducibility" before wrapping, so the adapters' init ignores the caller's generator state. (written blind, from the release alone)."""
CELL = 'lora_fine_tune'
KIND = 'state'
NOTE = "Reseeding the global generator inside a library function resets everyone's randomness: the adapters' initialisation then ignores the caller's seed. Leave torch's generator to the caller."
FAILS = ['test_lora_training']
SOURCE = '''
import copy
from peft import LoraConfig, PeftModel, get_peft_model


def lora_fine_tune(model: nn.Module, batches: list, target_modules: list, r: int, steps: int, lr: float,
                   head: str | None = None) -> tuple:
    """Fine-tune `model` with LoRA adapters; return (peft_model, merged copy, {"trainable": int, "losses": [float]})."""
    torch.manual_seed(0)  # reproducible adapters
    config = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=list(target_modules),
                        modules_to_save=[head] if head is not None else None)
    peft_model = get_peft_model(model, config)
    params = [p for p in peft_model.parameters() if p.requires_grad]
    trainable = int(sum(p.numel() for p in params))
    opt = torch.optim.AdamW(params, lr=lr)
    peft_model.train()
    losses = []
    for i in range(steps):
        out = peft_model(**batches[i % len(batches)])
        loss = out.loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    peft_model.eval()
    merged = copy.deepcopy(peft_model).merge_and_unload()
    merged.eval()
    return peft_model, merged, {"trainable": trainable, "losses": losses}
'''
