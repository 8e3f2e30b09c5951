"""Filters the root listing by dropping *.txt entries only: a .DS_Store or a stray .jpg becomes a 'class'. (written blind, from the release alone)."""
CELL = 'jpeg_folder_dataset'
KIND = 'overfit'
NOTE = "Only the subfolders of root are classes: any other entry there (a README, a .DS_Store, a stray .jpg) is neither a class nor a sample, whatever its name or extension."
FAILS = ['test_jpeg_dataset_labels']
SOURCE = '''
class JpegFolderDataset(Dataset):
    """root/<class>/<file>.jpg -> (uint8 image of shape (3, H, W), int label); labels follow sorted class names."""

    def __init__(self, root):
        self.root = str(root)
        self.classes = sorted(n for n in os.listdir(self.root) if not n.endswith(".txt"))
        self.samples = []
        for label, name in enumerate(self.classes):
            folder = os.path.join(self.root, name)
            if os.path.isdir(folder):
                for f in sorted(os.listdir(folder)):
                    self.samples.append((os.path.join(folder, f), label))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        return decode_jpeg(read_file(path), mode=ImageReadMode.RGB), label
'''
