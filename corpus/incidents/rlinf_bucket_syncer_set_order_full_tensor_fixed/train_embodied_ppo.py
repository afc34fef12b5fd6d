"""Safe twin of rlinf_bucket_syncer_set_order_full_tensor: BucketWeightSyncer keeps the names to
sync as `sorted(set(...))` (RLinf/RLinf#1355, merged), so every actor rank materializes the DTensors
-- one all-gather each -- in the same order.
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
