"""Decodes UNCHANGED and expands 1-channel images to 3: a CMYK JPEG comes back with 4 channels. (written blind, from the release alone)."""
CELL = 'jpeg_folder_dataset'
KIND = 'edge-case'
NOTE = "Grayscale is not the only non-RGB JPEG: a CMYK file decodes to 4 channels, and turning it into RGB is a colour conversion, not a channel copy. Decoders can produce RGB for every mode."
FAILS = ['test_jpeg_dataset_pixels']
SOURCE = '''
class JpegFolderDataset(Dataset):
    """root/<class>/<file>.jpg -> (uint8 image of shape (3, H, W), int label); labels follow sorted class names."""

    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.samples = [(str(f), i) for i, c in enumerate(self.classes) for f in sorted((root / c).iterdir())]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        img = decode_jpeg(read_file(path))  # what the file holds
        if img.shape[0] == 1:               # grayscale -> RGB
            img = img.expand(3, -1, -1).contiguous()
        return img, label
'''
