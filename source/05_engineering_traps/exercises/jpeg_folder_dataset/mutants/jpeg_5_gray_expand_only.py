"""Expands a 1-channel image to 3 channels by hand, but leaves CMYK JPEGs with 4 channels."""
CELL = "jpeg_folder_dataset"
KIND = "edge-case"
NOTE = "Grayscale is not the only non-RGB JPEG: a CMYK file decodes to 4 channels, and turning it into RGB is a colour conversion, not a channel copy. Decoders can produce RGB for every mode."
FAILS = ['test_jpeg_dataset_pixels']
SOURCE = '''
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
        img = decode_jpeg(read_file(path))
        if img.shape[0] == 1:
            img = img.expand(3, -1, -1).contiguous()
        return img, label
'''
