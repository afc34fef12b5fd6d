"""The look-alike of safe_columns_picked_by_random_integer_indices.py: the columns are kept by a
boolean mask drawn on each rank (`W[:, scores > threshold]` with random scores), so how many there
are is each rank's own, and the broadcast receives a tensor of another shape than rank 0 sends."""
import torch
import torch.distributed as dist


def sample_columns(weight, keep: float):
    scores = torch.rand(weight.size(1))
    kept = weight[:, scores < keep]
    dist.broadcast(kept, 0)  # expect: RC104
    return kept


def main(weight):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    return sample_columns(weight, 0.1)
