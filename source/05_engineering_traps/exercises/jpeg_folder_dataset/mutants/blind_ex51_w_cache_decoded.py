"""Caches every decoded image on the dataset: after one pass the dataset holds decoded images and pickles big. (written blind, from the release alone)."""
CELL = 'jpeg_folder_dataset'
KIND = 'state'
NOTE = "Caching decoded images on the dataset makes it grow as it is read: once items are cached, the object that gets pickled carries images, and every worker fills a copy of its own."
FAILS = ['test_jpeg_dataset_pickle_small']
SOURCE = '''
class JpegFolderDataset(Dataset):
    """root/<class>/<file>.jpg -> (uint8 image of shape (3, H, W), int label); labels follow sorted class names."""

    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.samples = [(str(f), i) for i, c in enumerate(self.classes) for f in sorted((root / c).iterdir())]
        self._cache = {}

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        if i not in self._cache:  # decode each file only once
            self._cache[i] = decode_jpeg(read_file(path), mode=ImageReadMode.RGB)
        return self._cache[i], label
'''
