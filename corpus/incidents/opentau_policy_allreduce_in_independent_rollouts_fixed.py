"""Safe twin of opentau_policy_allreduce_in_independent_rollouts: the independent rollouts sample
actions with `sync_across_ranks=False`, so no rank all-reduces inside its own episode (the PR's fix).

Thread: https://github.com/TensorAuto/OpenTau/pull/409
"""
import torch
import torch.distributed as dist
from torch import nn


class PI07Policy(nn.Module):
    def __init__(self, dim: int, n_actions: int):
        super().__init__()
        self.backbone = nn.Linear(dim, dim)
        self.branch_head = nn.Linear(dim, 1)
        self.action_head = nn.Linear(dim, n_actions)

    def _global_or_branch_decisions(self, decisions: torch.Tensor, sync_across_ranks: bool) -> bool:
        if sync_across_ranks and dist.is_available() and dist.is_initialized():
            flag = decisions.any().to(torch.int32).reshape(1)
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
            return bool(flag.item())
        return bool(decisions.any())

    @torch.no_grad()
    def sample_actions(self, obs: torch.Tensor, sync_across_ranks: bool = True) -> torch.Tensor:
        hidden = torch.relu(self.backbone(obs))
        use_branch = self._global_or_branch_decisions(self.branch_head(hidden) > 0, sync_across_ranks)
        logits = self.action_head(hidden)
        if use_branch:
            logits = logits * 0.5
        return logits.argmax(-1)


def rollout(policy: PI07Policy, env, max_steps: int) -> float:
    obs = env.reset()
    total = 0.0
    for _ in range(max_steps):
        action = policy.sample_actions(torch.as_tensor(obs, dtype=torch.float32), sync_across_ranks=False)
        obs, reward, done, info = env.step(action.numpy())
        total += reward
        if done:
            break
    return total


def eval_in_training(policy: PI07Policy, make_env, accelerator, n_episodes: int, max_steps: int) -> float:
    policy.eval()
    env = make_env(seed=1000 + accelerator.process_index)
    returns = [rollout(policy, env, max_steps) for _ in range(n_episodes)]
    gathered = accelerator.gather(torch.tensor(returns))
    policy.train()
    return gathered.mean().item()
