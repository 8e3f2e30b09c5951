"""Converts every input to a CHW uint8 tensor by hand, then resizes, scales and normalises."""
CELL = "make_preprocess"
SOURCE = '''
def make_preprocess(size, mean, std):
    m = torch.tensor(mean, dtype=torch.float32)[:, None, None]
    s = torch.tensor(std, dtype=torch.float32)[:, None, None]

    def preprocess(img):
        if isinstance(img, Image.Image):
            img = torch.from_numpy(np.asarray(img.convert("RGB")).copy()).permute(2, 0, 1)
        elif isinstance(img, np.ndarray):
            img = torch.from_numpy(img).permute(2, 0, 1)
        x = v2.functional.resize(img, list(size), antialias=True)
        x = x.to(torch.float32) / 255.0
        return (x - m) / s
    return preprocess
'''
