"""maskrcnn-benchmark training loop with validation inference added at every checkpoint, run only
in the main process.

Thread: https://github.com/facebookresearch/maskrcnn-benchmark/issues/275 ("Distributed validation")
Project: facebookresearch/maskrcnn-benchmark
What hung: "if I run the inference in the main process, it hangs there forever". `inference()`
(engine/inference.py) is collective: it calls `synchronize()` (a barrier) and gathers the
predictions of every rank with `all_gather`. Run under `if is_main_process():`, rank 0 waited in
those collectives while the others went on to `synchronize()` after the block and then to the next
iteration's DDP forward.
Fix (the thread; the reporter "modified my codes and it did not hang since then"; a maintainer's
recipe in issue #171): run `inference` on every process with a distributed validation loader (it
returns the evaluation on the main process only), then switch back to train mode.
Expected rankcheck finding: RC101 on the guarded `inference(...)` call (rank from
`is_main_process()` in maskrcnn_benchmark/utils/comm.py; the collectives in engine/inference.py).
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
            if is_main_process():
                if val_data_loader is not None:
                    logger.info("Evaluating on validation data set")
                    iou_types = ("bbox", "segm") if cfg.MODEL.MASK_ON else ("bbox",)
                    inference(model, val_data_loader, dataset_name="val", iou_types=iou_types, device=cfg.MODEL.DEVICE, evaluate=evaluate)  # expect: RC101
                model.train()
            synchronize()
    total = datetime.timedelta(seconds=int(time.time() - start))
    logger.info(f"Total training time: {total} on {get_world_size()} GPUs")
