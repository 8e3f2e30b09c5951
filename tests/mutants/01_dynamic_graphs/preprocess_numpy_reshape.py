"""Treats the HWC NumPy array as CHW (reshape instead of permute): channels scrambled."""
CELL = "make_preprocess"
FAILS = ["test_make_preprocess_numpy"]
SOURCE = '''
def make_preprocess(size, mean, std):
    tail = v2.Compose([v2.Resize(size, antialias=True), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(mean=list(mean), std=list(std))])

    def preprocess(img):
        if isinstance(img, np.ndarray):
            img = torch.from_numpy(img).reshape(3, img.shape[0], img.shape[1])
        elif isinstance(img, Image.Image):
            img = v2.functional.pil_to_tensor(img)
        return tail(img)
    return preprocess
'''
