"""PPO fine-tuning of a causal LM policy with RLinf's FSDP actor (torchrun, one process per actor
rank): after every update the actor pushes its weights to the rollout workers through the bucket
weight syncer.

Thread: https://github.com/RLinf/RLinf/pull/1355 ("fix: sort para in bucket syncer to prevent
hang", merged as d0a97ca; the same change as RLinf/RLinf#1354 was closed after a cherry-pick to
release/v0.3)
Project: RLinf/RLinf (rlinf/hybrid_engines/weight_syncer/bucket_syncer.py)
What hung: "BucketWeightSyncer stored param_names_need_sync as a plain set, so the iteration/sync
order was nondeterministic across ranks. The mismatched ordering between sender and receiver could
cause the bucketed allgather to hang." Every actor rank runs `weight_syncer.sync(...)` on its
sharded state dict and, for each name in that set, materializes the DTensor with `full_tensor()`,
an all-gather over the FSDP mesh. A set of strings iterates in an order that depends on the
per-process hash seed, so two ranks walk the names in different orders and enter the same
all-gather with shards of different parameters (different shapes), and the weight sync hangs.
Fix (the PR): `self.param_names_need_sync = sorted(set(param_names_need_sync))`, so every rank
materializes the parameters in the same order.
Expected rankcheck finding: RC104 on the `tensor.full_tensor()` in `materialize_tensor`
(rlinf_lite/utils/utils.py), reached from the bucket loop with a tensor chosen by this rank's set
iteration order.
Inferred: the rollout side, the PPO loss and the trajectory channel are reduced to what the weight
sync needs; the actor-to-rollout transport is a Ray queue here.
"""
import argparse
import asyncio

import ray
from omegaconf import OmegaConf

from rlinf_lite.scheduler import Channel
from rlinf_lite.workers.actor.fsdp_actor_worker import FSDPActor


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    cfg = OmegaConf.load(args.config)
    ray.init(address="auto", namespace="rlinf")

    actor = FSDPActor(cfg)
    actor.init_worker()
    trajectories = Channel("rollout_to_actor_trajectories")

    # the rollout workers start from the same checkpoint, but receive the weights once up front
    await actor.sync_model_to_rollout()
    for step in range(cfg.runner.max_steps):
        batch = await trajectories.get()
        metrics = actor.run_training(batch)
        await actor.sync_model_to_rollout()
        if actor._rank == 0 and step % cfg.runner.log_interval == 0:
            print(f"step {step}: {metrics}")


if __name__ == "__main__":
    asyncio.run(main())
