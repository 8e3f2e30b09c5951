"""Reads every file's bytes in __init__ (decodes later): the pickled dataset grows with the images."""
CELL = "jpeg_folder_dataset"
FAILS = ['test_jpeg_dataset_pickle_small']
SOURCE = '''
class JpegFolderDataset(Dataset):
    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.items = [(read_file(str(f)), label) for label, name in enumerate(self.classes)
                      for f in sorted((root / name).iterdir())]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        data, label = self.items[i]
        return decode_jpeg(data, mode=ImageReadMode.RGB), label
'''
