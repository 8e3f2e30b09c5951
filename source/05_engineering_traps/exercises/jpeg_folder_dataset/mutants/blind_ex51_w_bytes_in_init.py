"""Reads every file's bytes in __init__ (decodes lazily): the pickled dataset grows with the image size. (written blind, from the release alone)."""
CELL = 'jpeg_folder_dataset'
KIND = 'contract'
NOTE = "A dataset is pickled into every DataLoader worker: keeping decoded images or raw file bytes on it makes that copy grow with the images. Only paths and labels belong there; reading and decoding happen per item."
FAILS = ['test_jpeg_dataset_pickle_small']
SOURCE = '''
class JpegFolderDataset(Dataset):
    """root/<class>/<file>.jpg -> (uint8 image of shape (3, H, W), int label); labels follow sorted class names."""

    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.items = []
        for label, c in enumerate(self.classes):
            for f in sorted((root / c).iterdir()):
                self.items.append((f.read_bytes(), label))  # read once, decode later

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        data, label = self.items[i]
        raw = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        return decode_jpeg(raw, mode=ImageReadMode.RGB), label
'''
