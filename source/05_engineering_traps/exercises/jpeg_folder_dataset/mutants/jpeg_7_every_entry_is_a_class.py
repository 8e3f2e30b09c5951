"""Takes every entry of the root as a class, sorted: sorted(os.listdir(root)) breaks on a stray file in the root."""
CELL = "jpeg_folder_dataset"
KIND = "edge-case"
NOTE = "Only the subfolders of root are classes: any other entry there (a README, a .DS_Store, a stray .jpg) is neither a class nor a sample, whatever its name or extension."
FAILS = ["test_jpeg_dataset_pixels", "test_jpeg_dataset_labels", "test_jpeg_dataset_epoch",
         "test_jpeg_dataset_pickle_small"]
SOURCE = '''
class JpegFolderDataset(Dataset):
    def __init__(self, root):
        self.classes = sorted(os.listdir(root))
        self.samples = [(os.path.join(root, name, f), label) for label, name in enumerate(self.classes)
                        for f in sorted(os.listdir(os.path.join(root, name)))]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        return decode_jpeg(read_file(path), mode=ImageReadMode.RGB), label
'''
