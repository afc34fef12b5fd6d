"""Export helpers: sync_stats() writes the stats beside the checkpoint. Same name as
evaluate/utils.py's, no collective."""
import json

import torch


def sync_stats(stats: torch.Tensor, path: str = "stats.json") -> torch.Tensor:
    with open(path, "w") as handle:
        json.dump(stats.tolist(), handle)
    return stats
