"""Trimmed espnet2 Trainer.train_one_epoch: forward, cross-rank stats averaging, backward, step."""
import dataclasses
import logging

import torch
import torch.distributed as dist

from espnet2_lite.torch_utils.recursive_op import recursive_average


@dataclasses.dataclass
class TrainerOptions:
    ngpu: int
    accum_grad: int
    grad_clip: float
    distributed: bool
    output_dir: str
    log_interval: int = 100


def to_device(batch, device):
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


class Trainer:
    @classmethod
    def train_one_epoch(cls, model, iterator, optimizer, options: TrainerOptions, device):
        model.train()
        distributed = options.distributed
        world_size = dist.get_world_size() if distributed else 1
        reporter = {}
        for iiter, batch in enumerate(iterator, 1):
            batch = to_device(batch, device)
            loss, stats, weight = model(**batch)
            stats = {k: v.unsqueeze(0) for k, v in stats.items() if v is not None}
            if options.ngpu > 1 or distributed:
                # Apply weighted averaging for loss and stats
                loss = (loss * weight.type(loss.dtype)).sum()
                # if distributed, this method can also apply all_reduce()
                stats, weight = recursive_average(stats, weight.unsqueeze(0), distributed)
                # Now weight is summation over all workers
                loss /= weight
            if distributed:
                # DDP averages gradients over workers; undo it since loss is already averaged
                loss *= world_size
            loss = loss / options.accum_grad
            loss.backward()
            if iiter % options.accum_grad == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=options.grad_clip)
                optimizer.step()
                optimizer.zero_grad()
            for k, v in stats.items():
                reporter.setdefault(k, []).append(float(v))
            if iiter % options.log_interval == 0:
                logging.info(", ".join(f"{k}={sum(v) / len(v):.3f}" for k, v in reporter.items()))
                reporter = {}
