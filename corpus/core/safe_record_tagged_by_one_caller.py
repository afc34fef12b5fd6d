"""verl's DataProto: one record type carries every batch of the job, built at a dozen sites. One
site tags its output with the data-parallel rank it came from (`meta_info={"dp_rank": rank}`);
the actor's `update_policy` reads `data.meta_info["use_dynamic_bsz"]` of the batch the trainer
hands every rank, configuration alike everywhere, and all-reduces the micro-batch count under
it. A record's fields are each instance's: what one caller stored in its own record says
nothing of the batch another caller passes. The look-alike that guards on the rank a record
does hold is in rc101_guard_on_the_rank_a_record_holds.py."""
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


@dataclass
class DataProto:
    batch: dict = None
    meta_info: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, tensors, meta_info=None):
        return cls(batch=tensors, meta_info=meta_info or {})

    def union(self, other):
        self.batch.update(other.batch)
        self.meta_info.update(other.meta_info)
        return self


def generate_sequences(prompts, rank):
    responses = prompts["input_ids"].repeat(1, 2)
    return DataProto(batch={"responses": responses}, meta_info={"dp_rank": rank})


def compute_log_prob(data):
    return DataProto(batch={"old_log_probs": torch.zeros(len(data.batch["responses"]))})


def compute_values(data):
    return DataProto(batch={"values": torch.zeros(len(data.batch["responses"]))}, meta_info={"temperature": 1.0})


class Actor:
    def __init__(self, model, config):
        self.model = model
        self.config = config

    def update_policy(self, data: DataProto):
        use_dynamic_bsz = data.meta_info["use_dynamic_bsz"]
        micro_batches = data.batch["input_ids"].split(self.config.micro_batch_size)
        if use_dynamic_bsz:
            count = torch.tensor(len(micro_batches))
            dist.all_reduce(count, op=dist.ReduceOp.MAX)
        for micro_batch in micro_batches:
            self.model(micro_batch).mean().backward()


def fit(actor, loader, config):
    rank = dist.get_rank()
    for prompts in loader:
        batch = DataProto.from_dict(prompts, meta_info={"use_dynamic_bsz": config.use_dynamic_bsz})
        gen = generate_sequences(prompts, rank)
        batch = batch.union(gen)
        batch = batch.union(compute_log_prob(batch))
        batch = batch.union(compute_values(batch))
        actor.update_policy(batch)
