"""Always wraps q_proj and v_proj, the usual Llama choice, whatever target_modules says."""
KIND = "overfit"
NOTE = "Which layers get adapters is the caller's choice and depends on the architecture's own module names; a list copied from one model's recipe wraps the wrong layers or none at all."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_base_frozen', 'test_lora_training', 'test_lora_merge']
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
    if head is not None:
        predicted += sum(p.numel() for p in model.get_submodule(head).parameters())
    config = LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                        modules_to_save=None if head is None else [head])
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
