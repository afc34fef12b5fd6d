"""Safe twin of torchmetrics_auroc_compute_local_rank0.py: every process calls `metric.compute()`
(which synchronizes the state across all of them); only local rank 0 prints.

Thread: https://github.com/Lightning-AI/torchmetrics/issues/2758
"""
import os

import torch
import torch.distributed as dist
from torchmetrics.classification import BinaryAUROC


def calculate_auc(metric, local_rank):
    preds = torch.randn([1024, 512]).cuda(local_rank)
    target = torch.randint(low=0, high=2, size=(1024, 512)).cuda(local_rank)
    return metric(preds=preds, target=target)


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    metric = BinaryAUROC(thresholds=600).to(f"cuda:{local_rank}")

    for step in range(600):
        current_auc = calculate_auc(metric, local_rank)
        if local_rank == 0:
            print(f"=== step: {step}, auc: {current_auc} ===")
        if step == 100:
            average = metric.compute()
            if local_rank == 0:
                print(f"=== average auc over the first steps: {average} ===")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
