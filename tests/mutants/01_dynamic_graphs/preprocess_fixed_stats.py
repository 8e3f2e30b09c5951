"""Normalises with the ImageNet MEAN and STD of the example instead of the mean and std it was given."""
CELL = "make_preprocess"
FAILS = ["test_make_preprocess_pil", "test_make_preprocess_numpy", "test_make_preprocess_tensor"]
SOURCE = '''
def make_preprocess(size, mean, std):
    return v2.Compose([v2.ToImage(), v2.Resize(size, antialias=True), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
'''
