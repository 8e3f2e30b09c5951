"""read_image(path) without a mode: a grayscale JPEG comes back as (1, H, W), a CMYK one as (4, H, W)."""
CELL = "jpeg_folder_dataset"
KIND = "edge-case"
NOTE = "Unless asked for a colour mode, a JPEG decoder returns the channels the file holds: 1 for grayscale, 4 for CMYK. Decoders can be told which mode to produce."
FAILS = ['test_jpeg_dataset_pixels']
SOURCE = '''
from torchvision.io import read_image

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
        return read_image(path), label
'''
