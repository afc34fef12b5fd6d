"""COCO-format detection data with background (unannotated) images kept (after D-FINE src/data/dataset)."""

import torch
import torchvision
import torchvision.transforms.v2 as T
from torchvision import tv_tensors


class CocoDetection(torchvision.datasets.CocoDetection):
    def __init__(self, img_folder, ann_file, img_size=640, remove_empty=False):
        super().__init__(img_folder, ann_file)
        if remove_empty:
            self.ids = [i for i in self.ids if len(self.coco.getAnnIds(imgIds=i, iscrowd=False)) > 0]
        self.cat2label = {cat_id: i for i, cat_id in enumerate(sorted(self.coco.getCatIds()))}
        self.transforms = T.Compose([
            T.RandomPhotometricDistort(p=0.5), T.RandomHorizontalFlip(),
            T.Resize((img_size, img_size)), T.ToImage(), T.ToDtype(torch.float32, scale=True),
        ])

    def __getitem__(self, idx):
        image, anno = super().__getitem__(idx)
        w, h = image.size
        anno = [obj for obj in anno if obj.get("iscrowd", 0) == 0]
        boxes = torch.as_tensor([obj["bbox"] for obj in anno], dtype=torch.float32).reshape(-1, 4)
        boxes[:, 2:] += boxes[:, :2]
        boxes[:, 0::2].clamp_(min=0, max=w)
        boxes[:, 1::2].clamp_(min=0, max=h)
        labels = torch.as_tensor([self.cat2label[obj["category_id"]] for obj in anno], dtype=torch.int64)
        boxes = tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=(h, w))
        image, boxes = self.transforms(image, boxes)
        size = torch.tensor(image.shape[-2:][::-1], dtype=torch.float32).repeat(2)
        boxes = torchvision.ops.box_convert(boxes.as_subclass(torch.Tensor), "xyxy", "cxcywh") / size
        return image, {"boxes": boxes, "labels": labels, "image_id": self.ids[idx]}


def batch_image_collate_fn(items):
    return torch.stack([x[0] for x in items]), [x[1] for x in items]
