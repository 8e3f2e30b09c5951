"""Decodes every image in __init__ and keeps the tensors: the dataset pickled into each worker is huge."""
CELL = "jpeg_folder_dataset"
KIND = "contract"
NOTE = "A dataset is pickled into every DataLoader worker: keeping decoded images or raw file bytes on it makes that copy grow with the images. Only paths and labels belong there; reading and decoding happen per item."
FAILS = ["test_jpeg_dataset_pickle_small"]
SOURCE = '''
class JpegFolderDataset(Dataset):
    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.items = []
        for label, name in enumerate(self.classes):
            for f in sorted((root / name).iterdir()):
                self.items.append((decode_jpeg(read_file(str(f)), mode=ImageReadMode.RGB), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]
'''
