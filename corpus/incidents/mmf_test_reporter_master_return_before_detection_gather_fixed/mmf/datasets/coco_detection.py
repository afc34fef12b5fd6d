"""COCO detection dataset for DETR-style models (mmf/datasets/builders/coco/detection_dataset.py, reduced)."""
import torch
import torch.nn.functional as F
from PIL import Image
from pycocotools.coco import COCO
from torch.utils.data import Dataset
from torchvision import transforms as T

from mmf.utils.distributed import gather_tensor_along_batch


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    return torch.stack([(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)], dim=-1)


class PostProcess:
    """Convert the model's normalized (cx, cy, w, h) boxes and logits into COCO-style detections."""

    def __call__(self, outputs, target_sizes):
        out_logits, out_bbox = outputs["pred_logits"], outputs["pred_boxes"]
        prob = F.softmax(out_logits, -1)
        scores, labels = prob[..., :-1].max(-1)
        boxes = box_cxcywh_to_xyxy(out_bbox)
        img_h, img_w = target_sizes.unbind(1)
        scale_fct = torch.stack([img_w, img_h, img_w, img_h], dim=1)
        boxes = boxes * scale_fct[:, None, :]
        return [{"scores": s, "labels": l, "boxes": b} for s, l, b in zip(scores, labels, boxes)]


class DetectionCOCODataset(Dataset):
    dataset_name = "detection_coco"

    def __init__(self, image_dir, annotation_file, image_size=800):
        self.image_dir = image_dir
        self.coco = COCO(annotation_file)
        self.ids = sorted(self.coco.imgs.keys())
        self.transform = T.Compose(
            [T.Resize((image_size, image_size)), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]
        )
        self.postprocessors = {"bbox": PostProcess()}

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, idx):
        image_id = self.ids[idx]
        info = self.coco.loadImgs(image_id)[0]
        image = Image.open(f"{self.image_dir}/{info['file_name']}").convert("RGB")
        return {
            "image": self.transform(image),
            "image_id": torch.tensor(image_id, dtype=torch.long),
            "orig_size": torch.tensor([info["height"], info["width"]], dtype=torch.float),
        }

    def format_for_prediction(self, report):
        # gather detection output keys across processes
        pred_boxes = gather_tensor_along_batch(report.pred_boxes)
        pred_logits = gather_tensor_along_batch(report.pred_logits)
        orig_size = gather_tensor_along_batch(report.orig_size)

        outputs = {"pred_logits": pred_logits, "pred_boxes": pred_boxes}
        image_ids = report.image_id.tolist()
        results = self.postprocessors["bbox"](outputs, orig_size)

        predictions = []
        for image_id, r in zip(image_ids, results):
            scores = r["scores"].tolist()
            labels = r["labels"].tolist()
            # convert boxes from xyxy to xywh
            xmin, ymin, xmax, ymax = r["boxes"].unbind(1)
            boxes_xywh = torch.stack((xmin, ymin, xmax - xmin, ymax - ymin), dim=1).tolist()

            # group the boxes by image_id for de-duplication in `on_prediction_end`
            # (duplication is introduced by DistributedSampler)
            predictions.append(
                (
                    image_id,
                    [
                        {"image_id": image_id, "category_id": labels[k], "bbox": box, "score": scores[k]}
                        for k, box in enumerate(boxes_xywh)
                    ],
                )
            )
        return predictions

    def on_prediction_end(self, predictions):
        # de-duplicate the predictions (duplication is introduced by DistributedSampler)
        prediction_dict = {image_id: entries for image_id, entries in predictions}
        unique_entries = []
        for image_id in sorted(prediction_dict):
            unique_entries.extend(prediction_dict[image_id])
        return unique_entries
