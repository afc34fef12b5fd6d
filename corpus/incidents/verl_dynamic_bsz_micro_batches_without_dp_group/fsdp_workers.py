"""Actor worker of a verl-style trainer: builds the FSDP-sharded policy and its optimizer, and serves
log-probability and update requests on the chunk of the batch this rank was dispatched.

Part of the reconstruction of https://github.com/verl-project/verl/pull/5591; see dp_actor.py for
the incident description.
"""
import functools
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import AutoModelForCausalLM

from dp_actor import DataParallelPPOActor


class ActorRolloutRefWorker:
    def __init__(self, config):
        if not dist.is_initialized():
            dist.init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        self.config = config
        self.actor = None

    def init_model(self):
        module = AutoModelForCausalLM.from_pretrained(self.config.model.path, torch_dtype=torch.float32)
        module.gradient_checkpointing_enable()
        block_cls = type(module.model.layers[0])
        actor_module_fsdp = FSDP(
            module,
            auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={block_cls}),
            sharding_strategy=ShardingStrategy.FULL_SHARD,
            mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.float32),
            device_id=torch.cuda.current_device(),
            use_orig_params=False,
        )
        optimizer = torch.optim.AdamW(actor_module_fsdp.parameters(), lr=self.config.actor.optim.lr, weight_decay=0.01)
        self.actor = DataParallelPPOActor(config=self.config.actor, actor_module=actor_module_fsdp, actor_optimizer=optimizer)

    def compute_log_prob(self, data):
        data = data.to(torch.cuda.current_device())
        return self.actor.compute_log_prob(data, temperature=self.config.rollout.temperature)

    def update_actor(self, data):
        data = data.to(torch.cuda.current_device())
        metrics = self.actor.update_policy(data, temperature=self.config.rollout.temperature)
        torch.cuda.empty_cache()
        return metrics
