"""Classes are the sorted folders, but also globs root/**/*.jpg: a stray JPEG in the root becomes a sample."""
CELL = "jpeg_folder_dataset"
KIND = "edge-case"
NOTE = "Samples are the images inside the class folders: a JPEG lying directly in root belongs to no class, yet a recursive search of root picks it up as a sample with a made-up label."
FAILS = ["test_jpeg_dataset_labels"]
SOURCE = '''
class JpegFolderDataset(Dataset):
    def __init__(self, root):
        root = Path(root)
        self.classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        index = {name: i for i, name in enumerate(self.classes)}
        self.samples = [(str(p), index.get(p.parent.name, 0)) for p in sorted(root.glob("**/*.jpg"))]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        return decode_jpeg(read_file(path), mode=ImageReadMode.RGB), label
'''
