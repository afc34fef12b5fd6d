"""The look-alike of safe_record_tagged_by_one_caller.py that hangs: the same record type, built
at many sites, but here the function that tags a record with its rank reads it back from that
very record and only the rank it names all-reduces the rewards: the record holds this rank's
number, so the guard parts the ranks."""
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


@dataclass
class DataProto:
    batch: dict = None
    meta_info: dict = field(default_factory=dict)


def compute_log_prob(data):
    return DataProto(batch={"old_log_probs": torch.zeros(len(data.batch["responses"]))})


def compute_values(data):
    return DataProto(batch={"values": torch.zeros(len(data.batch["responses"]))}, meta_info={"temperature": 1.0})


def score(prompts, rank):
    out = DataProto(batch={"rewards": prompts["input_ids"].float().mean(dim=1)}, meta_info={"dp_rank": rank})
    if out.meta_info["dp_rank"] == 0:
        dist.all_reduce(out.batch["rewards"])  # expect: RC101
    return out


def fit(loader):
    rank = dist.get_rank()
    for prompts in loader:
        scored = score(prompts, rank)
        compute_values(compute_log_prob(scored))
