"""Uses torchvision's own find_classes/make_dataset helpers and read_image."""
CELL = "jpeg_folder_dataset"
SOURCE = '''
from torchvision.datasets.folder import find_classes, make_dataset
from torchvision.io import read_image

class JpegFolderDataset(Dataset):
    def __init__(self, root):
        self.classes, class_to_idx = find_classes(str(root))
        self.samples = make_dataset(str(root), class_to_idx, extensions=(".jpg", ".jpeg"))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        path, target = self.samples[index]
        return read_image(path, mode=ImageReadMode.RGB), target
'''
