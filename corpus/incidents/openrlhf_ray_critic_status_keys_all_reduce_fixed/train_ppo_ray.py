"""PPO with Ray: actor, critic, reference and reward models in separate Ray actor groups (one GPU
each), the actor group driving training. With 8 actor workers and 4 critic workers, only actor
workers 0-3 trigger critic training.

Safe twin of openrlhf_ray_critic_status_keys_all_reduce (OpenRLHF#135): see
openrlhf_lite/ppo_trainer.py.
"""
import argparse

import ray

from openrlhf_lite.ray_roles import (
    ActorModelRayActor,
    CriticModelRayActor,
    PPORayActorGroup,
    ReferenceModelRayActor,
    RewardModelRayActor,
)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrain", required=True)
    parser.add_argument("--critic_pretrain", default=None)
    parser.add_argument("--reward_pretrain", required=True)
    parser.add_argument("--prompt_data", required=True, help="text file, one prompt per line")
    parser.add_argument("--actor_num_gpus", type=int, default=8)
    parser.add_argument("--critic_num_gpus", type=int, default=4)
    parser.add_argument("--ref_num_gpus", type=int, default=4)
    parser.add_argument("--reward_num_gpus", type=int, default=4)
    parser.add_argument("--zero_stage", type=int, default=2)
    parser.add_argument("--micro_rollout_batch_size", type=int, default=8)
    parser.add_argument("--rollout_batch_size", type=int, default=512)
    parser.add_argument("--micro_train_batch_size", type=int, default=4)
    parser.add_argument("--max_epochs", type=int, default=1)
    parser.add_argument("--num_episodes", type=int, default=1)
    parser.add_argument("--prompt_max_len", type=int, default=1024)
    parser.add_argument("--generate_max_len", type=int, default=1024)
    parser.add_argument("--top_p", type=float, default=1.0)
    parser.add_argument("--eps_clip", type=float, default=0.2)
    parser.add_argument("--actor_learning_rate", type=float, default=1e-6)
    parser.add_argument("--critic_learning_rate", type=float, default=9e-6)
    parser.add_argument("--logging_steps", type=int, default=1)
    parser.add_argument("--use_wandb", action="store_true")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def main():
    args = parse_args()
    args.critic_pretrain = args.critic_pretrain or args.reward_pretrain
    ray.init()

    actor_group = PPORayActorGroup(args.actor_num_gpus, ActorModelRayActor, master_port=29500)
    critic_group = PPORayActorGroup(args.critic_num_gpus, CriticModelRayActor, master_port=29501)
    ref_group = PPORayActorGroup(args.ref_num_gpus, ReferenceModelRayActor, master_port=29502)
    reward_group = PPORayActorGroup(args.reward_num_gpus, RewardModelRayActor, master_port=29503)

    refs = []
    for group in (actor_group, critic_group, ref_group, reward_group):
        refs.extend(group.async_init_model_from_pretrained(args))
    ray.get(refs)

    ray.get(actor_group.async_fit_actor_model(critic_group, ref_group, [reward_group]))


if __name__ == "__main__":
    main()
