"""PIL + NumPy decode returned as (H, W, 3) instead of (3, H, W)."""
CELL = "jpeg_folder_dataset"
KIND = "wrong-value"
NOTE = "torchvision image tensors are channels-first, (3, H, W); an image converted through NumPy is (H, W, 3), with the channels last."
FAILS = ["test_jpeg_dataset_pixels"]
SOURCE = '''
from PIL import Image

class JpegFolderDataset(Dataset):
    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.samples = [(str(f), label) for label, name in enumerate(self.classes)
                        for f in sorted((root / name).iterdir())]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        with Image.open(path) as im:
            return torch.from_numpy(np.array(im.convert("RGB"))), label
'''
