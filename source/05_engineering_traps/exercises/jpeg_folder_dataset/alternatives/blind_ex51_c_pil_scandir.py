"""Correct: os.scandir + is_dir, decode with PIL .convert('RGB') into a uint8 CHW tensor. (written blind, from the release alone)."""
CELL = 'jpeg_folder_dataset'
SOURCE = '''
class JpegFolderDataset(Dataset):
    """root/<class>/<file>.jpg -> (uint8 image of shape (3, H, W), int label); labels follow sorted class names."""

    def __init__(self, root):
        with os.scandir(root) as it:
            dirs = {e.name: e.path for e in it if e.is_dir()}
        self.classes = sorted(dirs)
        self.paths, self.labels = [], []
        for label, name in enumerate(self.classes):
            with os.scandir(dirs[name]) as it:
                for e in it:
                    if e.is_file():
                        self.paths.append(e.path)
                        self.labels.append(label)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with Image.open(self.paths[i]) as im:
            arr = np.asarray(im.convert("RGB"), dtype=np.uint8)
        return torch.from_numpy(arr.copy()).permute(2, 0, 1).contiguous(), int(self.labels[i])
'''
