"""Safe twin of monai_auc_all_gather_uneven_lengths.py: predictions are gathered with a helper that
agrees on the longest length first, pads, gathers and trims (MONAI's evenly_divisible_all_gather),
so every rank's all-gather has the same shape.

Thread: https://github.com/Project-MONAI/MONAI/issues/1531
"""
import ignite.distributed as idist
import torch
from ignite.engine import Engine, Events
from monai.data import DataLoader, DistributedSampler
from sklearn.metrics import roc_auc_score


def evenly_divisible_all_gather(data: torch.Tensor) -> torch.Tensor:
    length = torch.tensor([data.shape[0]], device=data.device)
    all_lengths = idist.all_gather(length)
    max_len = int(all_lengths.max().item())
    if data.shape[0] < max_len:
        pad = torch.zeros((max_len - data.shape[0],) + tuple(data.shape[1:]), device=data.device, dtype=data.dtype)
        data = torch.cat([data, pad], dim=0)
    gathered = idist.all_gather(data.unsqueeze(0))
    return torch.cat([gathered[i, : int(n)] for i, n in enumerate(all_lengths.tolist())], dim=0)


class DistributedROCAUC:
    def __init__(self):
        self._preds = []
        self._labels = []

    def reset(self):
        self._preds.clear()
        self._labels.clear()

    def update(self, y_pred: torch.Tensor, y: torch.Tensor):
        self._preds.append(y_pred.detach().sigmoid().flatten())
        self._labels.append(y.detach().flatten())

    def compute(self) -> float:
        preds = torch.cat(self._preds)
        labels = torch.cat(self._labels)
        all_preds = evenly_divisible_all_gather(preds)
        all_labels = evenly_divisible_all_gather(labels)
        return float(roc_auc_score(all_labels.cpu().numpy(), all_preds.cpu().numpy()))


def build_evaluator(net, val_ds, device, batch_size: int = 8) -> Engine:
    sampler = DistributedSampler(val_ds, even_divisible=False, shuffle=False)
    loader = DataLoader(val_ds, batch_size=batch_size, sampler=sampler, num_workers=4)
    auc = DistributedROCAUC()

    def step(engine, batch):
        net.eval()
        with torch.no_grad():
            images, labels = batch["image"].to(device), batch["label"].to(device)
            logits = net(images)
        auc.update(logits, labels)

    evaluator = Engine(step)
    evaluator.add_event_handler(Events.EPOCH_STARTED, lambda engine: auc.reset())

    @evaluator.on(Events.EPOCH_COMPLETED)
    def log_auc(engine):
        engine.state.metrics["val_auc"] = auc.compute()
        if idist.get_rank() == 0:
            print(f"validation AUC {engine.state.metrics['val_auc']:.4f}")

    evaluator.loader = loader
    return evaluator
