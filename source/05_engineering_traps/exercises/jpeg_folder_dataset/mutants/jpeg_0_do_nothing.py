"""An empty dataset: no classes, no samples."""
CELL = "jpeg_folder_dataset"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (an empty dataset) instead of the folder's images."
FAILS = ["test_jpeg_dataset_pixels", "test_jpeg_dataset_labels", "test_jpeg_dataset_epoch",
         "test_jpeg_dataset_pickle_small"]
SOURCE = '''
class JpegFolderDataset(Dataset):
    def __init__(self, root):
        self.classes = []

    def __len__(self):
        return 0

    def __getitem__(self, i):
        raise IndexError(i)
'''
