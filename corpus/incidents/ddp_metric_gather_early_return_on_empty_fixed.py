"""Safe twin of ddp_metric_gather_early_return_on_empty.py: the early return is gone, so a rank with
no monitored layer still enters the `all_gather_object` (with an empty dict).

Thread: https://github.com/bo-ke/llm-internal-medicine/pull/45
"""
import json
from collections import defaultdict
from typing import Callable, Dict, List, Optional

import torch.distributed as dist


def all_gather_object_fn(obj):
    gathered: List = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, obj)
    return gathered


class LayerMonitor:
    def __init__(self, out_path: str, gather_fn: Optional[Callable] = None):
        self.out_path = out_path
        self._gather_fn = gather_fn
        self.local_metrics: Dict[str, Dict[str, float]] = {}

    def record(self, layer_name: str, stats: Dict[str, float]) -> None:
        self.local_metrics[layer_name] = stats

    def gather_and_aggregate(self, local_metrics: Dict[str, Dict[str, float]]) -> Dict[str, Dict[str, float]]:
        if self._gather_fn is None:
            return dict(local_metrics)
        gathered = self._gather_fn(local_metrics)
        if gathered is None:
            return dict(local_metrics)
        merged: Dict[str, Dict[str, float]] = defaultdict(dict)
        for part in gathered:
            for layer, stats in (part or {}).items():
                merged[layer].update(stats)
        return dict(merged)

    def flush(self, step: int) -> None:
        aggregated = self.gather_and_aggregate(self.local_metrics)
        if dist.get_rank() == 0 and aggregated:
            with open(self.out_path, "a") as f:
                f.write(json.dumps({"step": step, "layers": aggregated}) + "\n")
        self.local_metrics = {}


def make_monitor(out_path: str) -> LayerMonitor:
    return LayerMonitor(out_path, gather_fn=all_gather_object_fn if dist.is_initialized() else None)
