"""Dataset inference: each rank predicts its shard, the shards are gathered, rank 0 evaluates."""
import logging

import torch

from ..utils.comm import all_gather, is_main_process, synchronize


def compute_on_dataset(model, data_loader, device):
    model.eval()
    results = {}
    for images, targets, image_ids in data_loader:
        with torch.no_grad():
            output = model(images.to(device))
        results.update({img_id: o.to("cpu") for img_id, o in zip(image_ids, output)})
    return results


def _accumulate_predictions_from_multiple_gpus(predictions_per_gpu):
    all_predictions = all_gather(predictions_per_gpu)
    if not is_main_process():
        return None
    predictions = {}
    for p in all_predictions:
        predictions.update(p)
    return [predictions[i] for i in sorted(predictions)]


def inference(model, data_loader, dataset_name, iou_types=("bbox",), device="cuda", evaluate=None):
    logger = logging.getLogger("maskrcnn_benchmark.inference")
    logger.info(f"Start evaluation on {dataset_name} dataset({len(data_loader.dataset)} images).")
    predictions = compute_on_dataset(model, data_loader, torch.device(device))
    synchronize()
    predictions = _accumulate_predictions_from_multiple_gpus(predictions)
    if not is_main_process():
        return None
    return evaluate(dataset=data_loader.dataset, predictions=predictions, iou_types=iou_types)
