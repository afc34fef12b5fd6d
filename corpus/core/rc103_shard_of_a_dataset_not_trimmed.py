"""The look-alike of safe_shard_of_a_dataset_trimmed_to_a_world_multiple.py without the cut:
`shard(world_size, rank)` gives the first `n % world_size` ranks one row more, so with a batch
size that divides the shard some ranks run one more step, whose DDP forward and gradient
all-reduce the others never join.
"""
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def train(model, dataset, batch_size):
    rank = dist.get_rank()
    dataset = dataset.shard(dist.get_world_size(), rank)
    ddp_model = DDP(model, device_ids=[rank])
    for batch in DataLoader(dataset, batch_size=batch_size):  # expect: RC103
        ddp_model(batch["input_ids"]).sum().backward()
