"""Counts what requires grad after wrapping, builds the optimizer from named parameters, and merges a copy made from the trained adapter model."""
CELL = "lora_fine_tune"
SOURCE = '''
import copy
from peft import LoraConfig, PeftModel, get_peft_model


def lora_fine_tune(model: nn.Module, batches: list, target_modules: list, r: int, steps: int, lr: float,
                   head: str | None = None) -> tuple:
    """Fine-tune `model` with LoRA adapters; return (peft_model, merged copy, {"trainable": int, "losses": [float]})."""
    extra = {"modules_to_save": [head]} if head is not None else {}
    pm = get_peft_model(model, LoraConfig(target_modules=list(target_modules), r=r, lora_alpha=r * 2,
                                          lora_dropout=0.0, **extra))
    named = [(n, p) for n, p in pm.named_parameters() if p.requires_grad]
    count = 0
    for _, p in named:
        count += p.numel()
    opt = torch.optim.AdamW([p for _, p in named], lr=lr)
    losses = []
    pm.train()
    step = 0
    while step < steps:
        batch = batches[step % len(batches)]
        loss = pm(**batch).loss
        losses.append(loss.item())
        loss.backward()
        opt.step()
        opt.zero_grad()
        step += 1
    pm.eval()
    twin = copy.deepcopy(pm)
    return pm, twin.merge_and_unload().eval(), {"trainable": count, "losses": losses}
'''
