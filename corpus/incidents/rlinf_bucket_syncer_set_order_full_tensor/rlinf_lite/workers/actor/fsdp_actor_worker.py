"""Trimmed rlinf/workers/actor/fsdp_actor_worker.py: the PPO actor, sharded with FSDP2 over the
actor ranks, syncs its weights to the rollout workers after every update."""
import torch
import torch.nn.functional as F
from omegaconf import OmegaConf
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from transformers import AutoModelForCausalLM

from rlinf_lite.hybrid_engines.weight_syncer import WeightSyncer
from rlinf_lite.scheduler import Channel, Worker
from rlinf_lite.utils.utils import collect_param_names_need_sync


class FSDPActor(Worker):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.version = 0
        self.weight_syncer = WeightSyncer.create(OmegaConf.select(cfg, "weight_syncer"))
        self._is_weight_sender = self._rank == 0
        self._weight_channel = Channel("actor_to_rollout_weights")

    def init_worker(self):
        mesh = init_device_mesh("cuda", (self._world_size,), mesh_dim_names=("fsdp",))
        model = AutoModelForCausalLM.from_pretrained(self.cfg.actor.model.model_path, torch_dtype=torch.bfloat16)
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh, mp_policy=mp)
        fully_shard(model, mesh=mesh, mp_policy=mp)
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=self.cfg.actor.optim.lr)
        self.param_names_need_sync = collect_param_names_need_sync(model)

    def get_rollout_state_dict(self) -> dict:
        # sharded (DTensor) state dict: each rank holds its own shard of every parameter
        return get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=False, cpu_offload=False))

    def run_training(self, batch) -> dict:
        self.model.train()
        logits = self.model(input_ids=batch["input_ids"].cuda(), attention_mask=batch["attention_mask"].cuda()).logits
        logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        token_logp = logp.gather(-1, batch["input_ids"][:, 1:, None].cuda()).squeeze(-1)
        ratio = torch.exp(token_logp - batch["old_logprobs"].cuda())
        adv = batch["advantages"].cuda()
        loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv)
        loss = (loss * batch["loss_mask"].cuda()).sum() / batch["loss_mask"].sum().clamp(min=1)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.actor.optim.clip_grad)
        self.optimizer.step()
        self.version += 1
        return {"actor/pg_loss": loss.item()}

    async def sync_model_to_rollout(self) -> None:
        state_dict = self.get_rollout_state_dict()

        async def send_func(data):
            if not self._is_weight_sender:
                return
            await self._weight_channel.put(data)

        if not self.weight_syncer.sender_initialized():
            await self.weight_syncer.init_sender(
                state_dict=state_dict, send=send_func, param_names_need_sync=self.param_names_need_sync,
            )
        await self.weight_syncer.sync(state_dict, send_func, version=self.version)
