"""Count r*(in+out) per targeted Linear plus the head before wrapping, cycle the batches, merge a copy via get_base_model. (written blind, from the release alone)."""
CELL = 'lora_fine_tune'
SOURCE = '''
import copy
import itertools
from peft import LoraConfig, PeftModel, get_peft_model


def _is_target(name, targets):
    return any(name == t or name.endswith("." + t) for t in targets)


def lora_fine_tune(model: nn.Module, batches: list, target_modules: list, r: int, steps: int, lr: float,
                   head: str | None = None) -> tuple:
    """Fine-tune `model` with LoRA adapters; return (peft_model, merged copy, {"trainable": int, "losses": [float]})."""
    targets = list(target_modules)
    count = 0
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Linear) and _is_target(name, targets):
            count += r * (mod.in_features + mod.out_features)
    if head is not None:
        count += sum(p.numel() for p in model.get_submodule(head).parameters())
    kwargs = dict(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=targets)
    if head is not None:
        kwargs["modules_to_save"] = [head]
    pm = get_peft_model(model, LoraConfig(**kwargs))
    assert count == pm.get_nb_trainable_parameters()[0], (count, pm.get_nb_trainable_parameters())
    optimizer = torch.optim.AdamW((p for p in pm.parameters() if p.requires_grad), lr)
    pm.train()
    losses = []
    for batch in itertools.islice(itertools.cycle(batches), steps):
        optimizer.zero_grad(set_to_none=True)
        loss = pm(**batch).loss
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    pm.eval()
    work = copy.deepcopy(pm)
    merged = work.merge_and_unload().eval()
    return pm, merged, {"trainable": count, "losses": losses}
'''
