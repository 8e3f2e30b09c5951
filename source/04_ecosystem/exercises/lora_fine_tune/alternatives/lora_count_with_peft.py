"""Counts with PEFT's own get_nb_trainable_parameters after wrapping, cycles the batches with itertools, merges a copy of the adapter model."""
CELL = "lora_fine_tune"
SOURCE = '''
import copy
import itertools
from peft import LoraConfig, PeftModel, get_peft_model


def lora_fine_tune(model: nn.Module, batches: list, target_modules: list, r: int, steps: int, lr: float,
                   head: str | None = None) -> tuple:
    """Fine-tune `model` with LoRA adapters; return (peft_model, merged copy, {"trainable": int, "losses": [float]})."""
    cfg = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=target_modules,
                     modules_to_save=[head] if head else None)
    wrapped = get_peft_model(model, cfg)
    trainable, _total = wrapped.get_nb_trainable_parameters()
    opt = torch.optim.AdamW((p for p in wrapped.parameters() if p.requires_grad), lr=lr)
    wrapped.train()
    losses = []
    for batch in itertools.islice(itertools.cycle(batches), steps):
        opt.zero_grad(set_to_none=True)
        out = wrapped(**batch)
        out.loss.backward()
        opt.step()
        losses.append(out.loss.item())
    wrapped.eval()
    copy_of = copy.deepcopy(wrapped)
    merged = copy_of.merge_and_unload()
    merged.eval()
    return wrapped, merged, {"trainable": int(trainable), "losses": losses}
'''
