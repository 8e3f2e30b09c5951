"""Returns the model it was given twice and an empty report: nothing is wrapped or trained."""
KIND = "do-nothing"
NOTE = "Returning the untouched model trains nothing: LoRA has to add adapters, train them and fold them into a copy before anything can be reported."
CELL = "lora_fine_tune"
FAILS = ['test_lora_trainable', 'test_lora_base_frozen', 'test_lora_training', 'test_lora_merge']
SOURCE = '''
import copy
from peft import LoraConfig, PeftModel, get_peft_model


def lora_fine_tune(model: nn.Module, batches: list, target_modules: list, r: int, steps: int, lr: float,
                   head: str | None = None) -> tuple:
    """Fine-tune `model` with LoRA adapters; return (peft_model, merged copy, {"trainable": int, "losses": [float]})."""
    return model, model, {"trainable": 0, "losses": []}
'''
