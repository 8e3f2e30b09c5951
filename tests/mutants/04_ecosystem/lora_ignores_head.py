"""Never lists the head in modules_to_save: the new head stays frozen at its random initialisation."""
KIND = "edge-case"
NOTE = "A new head has nothing pretrained to adapt, and LoRA freezes everything it does not add: unless the head is trained in full it stays random, and it is missing from the trainable count."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_training']
SOURCE = '''
import copy
from peft import LoraConfig, PeftModel, get_peft_model


def lora_fine_tune(model: nn.Module, batches: list, target_modules: list, r: int, steps: int, lr: float,
                   head: str | None = None) -> tuple:
    """Fine-tune `model` with LoRA adapters; return (peft_model, merged copy, {"trainable": int, "losses": [float]})."""
    def is_target(name):
        return any(name == t or name.endswith("." + t) for t in target_modules)

    predicted = sum(r * (mod.in_features + mod.out_features) for name, mod in model.named_modules()
                    if isinstance(mod, nn.Linear) and is_target(name))
    config = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=list(target_modules),
                        modules_to_save=None)
    peft_model = get_peft_model(model, config)
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=lr)
    peft_model.train()
    losses = []
    for i in range(steps):
        loss = peft_model(**batches[i % len(batches)]).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    peft_model.eval()
    merged = copy.deepcopy(peft_model).merge_and_unload().eval()
    return peft_model, merged, {"trainable": predicted, "losses": losses}
'''
