"""Resizes without antialiasing: downscaled images alias, several grey levels off."""
CELL = "make_preprocess"
FAILS = ["test_make_preprocess_pil", "test_make_preprocess_numpy", "test_make_preprocess_tensor"]
SOURCE = '''
def make_preprocess(size, mean, std):
    return v2.Compose([v2.ToImage(), v2.Resize(size, antialias=False), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(mean=list(mean), std=list(std))])
'''
