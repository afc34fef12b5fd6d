"""Tracking a running AUROC with torchmetrics in a torchrun script: every rank updates the metric,
but the epoch-level value is computed inside `if local_rank == 0:`.

Thread: https://github.com/Lightning-AI/torchmetrics/issues/2758 ("BinaryAUROC hangs when calling metric.compute on multi-node multi-cards")
Project: Lightning-AI/torchmetrics
What hung: `Metric.compute()` synchronizes the metric state across processes first
(`sync_on_compute=True` by default, an all-gather of the state tensors). Only local rank 0 of each
node called it -- on several nodes, several processes but not all -- and they waited for the
ranks that kept updating ("prints the auc until it hangs at the 100-th iteration").
Fix: call `compute()` on every process and print on one; the synchronization needs the whole
group. (The stored excerpt of the thread shows no maintainer reply; this is the rule that the metric's
`sync_on_compute` option documents.)
Expected rankcheck finding: RC101 on the guarded `metric.compute()`.
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
                print(f"=== average auc over the first steps: {metric.compute()} ===")  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
