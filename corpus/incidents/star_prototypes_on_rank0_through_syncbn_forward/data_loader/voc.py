"""Pascal VOC in the class-incremental setting: only the pixels of the current task's classes
keep their label, everything else becomes background (0); 255 stays "ignore"."""
import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class _VOCSegmentation(Dataset):
    def __init__(self, root, split_file, keep_classes, crop=512):
        with open(split_file, "r") as f:
            self.ids = [line.strip() for line in f if line.strip()]
        self.root = root
        self.crop = crop
        self.lut = np.zeros(256, dtype=np.uint8)
        self.lut[255] = 255
        for c in keep_classes:
            self.lut[c] = c

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, idx):
        name = self.ids[idx]
        image = Image.open(os.path.join(self.root, "JPEGImages", name + ".jpg")).convert("RGB").resize((self.crop, self.crop))
        label = Image.open(os.path.join(self.root, "SegmentationClassAug", name + ".png")).resize((self.crop, self.crop), Image.NEAREST)
        image = torch.from_numpy(np.asarray(image, dtype=np.float32) / 255.0).permute(2, 0, 1)
        label = torch.from_numpy(self.lut[np.asarray(label)].astype(np.int64))
        return {"image": image, "label": label}


class VOCIncremental:
    def __init__(self, root, task_name="15-5", step=0, crop=512, batch_size=12, num_workers=4):
        first, inc = (int(t) for t in task_name.split("-"))
        self.steps = [list(range(1, first + 1))]
        start = first + 1
        while start <= 20:
            self.steps.append(list(range(start, min(start + inc, 21))))
            start += inc
        self.step = step
        self.root = root
        self.crop = crop
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.train_set = _VOCSegmentation(root, os.path.join(root, "splits", "train_aug.txt"), self.steps[step], crop)
        seen = [c for s in self.steps[: step + 1] for c in s]
        self.val_set = _VOCSegmentation(root, os.path.join(root, "splits", "val.txt"), seen, crop)

    def get_per_task_classes(self, step=None):
        step = self.step if step is None else step
        return [1 + len(self.steps[0])] + [len(s) for s in self.steps[1 : step + 1]]

    def task_info(self):
        old = [c for s in self.steps[: self.step] for c in s]
        return {"old_class": old, "new_class": self.steps[self.step]}

    def get_train_loader(self, sampler):
        return DataLoader(self.train_set, batch_size=self.batch_size, sampler=sampler, shuffle=sampler is None,
                          num_workers=self.num_workers, pin_memory=True, drop_last=True)

    def get_val_loader(self, sampler):
        return DataLoader(self.val_set, batch_size=1, sampler=sampler, num_workers=self.num_workers, pin_memory=True)
