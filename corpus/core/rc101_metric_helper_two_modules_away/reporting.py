"""Epoch reporting; report_epoch() looks like pure logging but reaches an all_reduce through metrics.global_mean()."""
import json

from metrics import global_mean


def report_epoch(epoch: int, loss_sum: float, correct: int, seen: int, log_path: str) -> None:
    record = {
        "epoch": epoch,
        "loss": global_mean(loss_sum, seen),
        "acc": correct / max(seen, 1),
    }
    with open(log_path, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(record)
