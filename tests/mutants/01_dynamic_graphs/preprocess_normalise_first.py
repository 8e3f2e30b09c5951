"""Normalises before scaling to [0, 1] (divides by 255 last)."""
CELL = "make_preprocess"
FAILS = ["test_make_preprocess_pil", "test_make_preprocess_numpy", "test_make_preprocess_tensor"]
SOURCE = '''
def make_preprocess(size, mean, std):
    return v2.Compose([v2.ToImage(), v2.Resize(size, antialias=True), v2.ToDtype(torch.float32),
                       v2.Normalize(mean=list(mean), std=list(std)), v2.Lambda(lambda x: x / 255)])
'''
