"""Classes are the sorted folders, but also globs root/**/*.jpg: a stray JPEG in the root becomes a sample."""
CELL = "jpeg_folder_dataset"
KIND = "edge-case"
NOTE = "Samples are the images inside the class folders: a JPEG lying directly in root belongs to no class, yet a recursive search of root picks it up as a sample with a made-up label."
FAILS = ["test_jpeg_dataset_labels"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """root/<class>/<file>.jpg -> (uint8 image of shape (3, H, W), int label); labels follow sorted class names."""

''', ''),
('''
        self.samples = [(str(f), label) for label, name in enumerate(self.classes)
                        for f in sorted((root / name).iterdir()) if f.is_file()]
''', '''
        index = {name: i for i, name in enumerate(self.classes)}
        self.samples = [(str(p), index.get(p.parent.name, 0)) for p in sorted(root.glob("**/*.jpg"))]
'''),
]
