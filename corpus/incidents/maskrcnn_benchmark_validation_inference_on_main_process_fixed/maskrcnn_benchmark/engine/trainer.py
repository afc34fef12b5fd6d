"""Safe twin of maskrcnn_benchmark_validation_inference_on_main_process: every process runs
`inference` on its shard of a distributed validation loader (rank 0 alone evaluates, inside
inference), then all return to train mode.

Thread: https://github.com/facebookresearch/maskrcnn-benchmark/issues/275
"""
import datetime
import logging
import time

from ..utils.comm import get_world_size, is_main_process, synchronize
from .inference import inference


def do_train(model, data_loader, val_data_loader, optimizer, scheduler, checkpointer, device, checkpoint_period, arguments, cfg, evaluate):
    logger = logging.getLogger("maskrcnn_benchmark.trainer")
    max_iter = len(data_loader)
    start_iter = arguments["iteration"]
    model.train()
    start = time.time()
    for iteration, (images, targets, _) in enumerate(data_loader, start_iter):
        iteration = iteration + 1
        arguments["iteration"] = iteration
        loss_dict = model(images.to(device), [t.to(device) for t in targets])
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        scheduler.step()

        if iteration % checkpoint_period == 0 or iteration == max_iter:
            checkpointer.save("model_{:07d}".format(iteration), **arguments)
            if val_data_loader is not None:
                if is_main_process():
                    logger.info("Evaluating on validation data set")
                iou_types = ("bbox", "segm") if cfg.MODEL.MASK_ON else ("bbox",)
                inference(model, val_data_loader, dataset_name="val", iou_types=iou_types, device=cfg.MODEL.DEVICE, evaluate=evaluate)
            model.train()
            synchronize()
    total = datetime.timedelta(seconds=int(time.time() - start))
    logger.info(f"Total training time: {total} on {get_world_size()} GPUs")
