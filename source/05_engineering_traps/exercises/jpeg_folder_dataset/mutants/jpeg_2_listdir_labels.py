"""Labels in directory-listing order (os.listdir is not sorted)."""
CELL = "jpeg_folder_dataset"
KIND = "wrong-value"
NOTE = "os.listdir returns entries in file-system order, not sorted: the labels then depend on the disk instead of being the index of each folder among the sorted class names."
FAILS = ["test_jpeg_dataset_labels"]
SOURCE = '''
class JpegFolderDataset(Dataset):
    def __init__(self, root):
        self.classes = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
        self.samples = []
        for label, name in enumerate(self.classes):
            for f in os.listdir(os.path.join(root, name)):
                self.samples.append((os.path.join(root, name, f), label))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        return decode_jpeg(read_file(path), mode=ImageReadMode.RGB), label
'''
