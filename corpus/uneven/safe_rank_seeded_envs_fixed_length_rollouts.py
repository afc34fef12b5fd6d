"""Each rank rolls out its own environment, seeded with its rank so the episodes differ, but for a
fixed number of steps: an episode that ends is reset and the rollout goes on, so every rank
issues the policy's per-step all-reduce the same number of times."""
import torch
import torch.distributed as dist


def policy_step(policy, obs):
    action_logits = policy(obs)
    entropy = torch.distributions.Categorical(logits=action_logits).entropy().mean().detach()
    dist.all_reduce(entropy)
    return action_logits.argmax(-1)


def rollout(policy, make_env, rank, steps):
    env = make_env(seed=1000 + rank)
    obs = env.reset()
    total = 0.0
    for _ in range(steps):
        action = policy_step(policy, torch.as_tensor(obs, dtype=torch.float32))
        obs, reward, done, info = env.step(action.numpy())
        total += reward
        if done:
            obs = env.reset()
    return total


def main(policy, make_env, steps):
    dist.init_process_group("gloo")
    total = torch.tensor([rollout(policy, make_env, dist.get_rank(), steps)])
    dist.all_reduce(total)
    return total.item()
