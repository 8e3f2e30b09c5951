"""Decodes with PIL and permutes to (3, H, W) uint8; paths kept in a NumPy string array, labels in a tensor."""
CELL = "jpeg_folder_dataset"
SOURCE = '''
from PIL import Image

class JpegFolderDataset(Dataset):
    def __init__(self, root):
        self.classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        paths, labels = [], []
        for label, name in enumerate(self.classes):
            for e in os.scandir(os.path.join(root, name)):
                paths.append(e.path)
                labels.append(label)
        self.paths = np.array(paths)
        self.labels = labels

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with Image.open(str(self.paths[i])) as im:
            arr = np.array(im.convert("RGB"))
        return torch.from_numpy(arr).permute(2, 0, 1).contiguous(), int(self.labels[i])
'''
