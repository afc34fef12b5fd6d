"""Pose dataset and collate function of LibreYOLO (trimmed: YOLO-format images and keypoint labels,
letterboxed to a square input).

Part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349; see
libreyolo/training/trainer.py for the incident description.
"""
from pathlib import Path
from typing import List

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset

MAX_LABELS = 120


def get_img_files(root: str) -> List[str]:
    return sorted(str(p) for p in Path(root).rglob("*") if p.suffix.lower() in {".jpg", ".jpeg", ".png"})


def img2label_paths(img_files: List[str]) -> List[str]:
    return [f.replace("/images/", "/labels/").rsplit(".", 1)[0] + ".txt" for f in img_files]


class YOLOPoseDataset(Dataset):
    def __init__(self, img_files: List[str], label_files: List[str], imgsz: int, num_keypoints: int):
        self.img_files = img_files
        self.label_files = label_files
        self.imgsz = imgsz
        self.num_keypoints = num_keypoints

    def __len__(self):
        return len(self.img_files)

    def __getitem__(self, index):
        img = cv2.imread(self.img_files[index])
        h, w = img.shape[:2]
        img = cv2.resize(img, (self.imgsz, self.imgsz))
        img = torch.from_numpy(img[..., ::-1].copy()).permute(2, 0, 1).float() / 255.0
        width = 5 + 3 * self.num_keypoints
        targets = np.zeros((MAX_LABELS, width), dtype=np.float32)
        label_path = Path(self.label_files[index])
        if label_path.exists():
            rows = np.loadtxt(label_path, ndmin=2, dtype=np.float32)[:MAX_LABELS]
            # class, cx, cy, w, h in pixels of the resized image; keypoints x, y, v
            rows[:, 1:5] *= self.imgsz
            rows[:, 5::3] *= self.imgsz
            rows[:, 6::3] *= self.imgsz
            targets[: len(rows)] = rows
        return img, torch.from_numpy(targets), (h, w), index


def pose_collate_fn(batch):
    imgs, targets, infos, ids = zip(*batch)
    return torch.stack(imgs), torch.stack(targets), list(infos), list(ids)
