"""Resizes before ToImage: PIL and tensors work, but v2.Resize hands the NumPy array back unresized."""
CELL = "make_preprocess"
FAILS = ["test_make_preprocess_numpy"]
SOURCE = '''
def make_preprocess(size, mean, std):
    return v2.Compose([v2.Resize(size, antialias=True), v2.ToImage(), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(mean=list(mean), std=list(std))])
'''
