"""OpenTau's in-training simulation eval: every rank rolls out its own episodes, of lengths its own
simulator decides, while the policy's action sampling OR-reduces its branch decisions across ranks
at every step.

Thread: https://github.com/TensorAuto/OpenTau/pull/409 ("fix(train,pi07): stabilize multi-rank in-training sim eval (OOM + desync)")
Project: TensorAuto/OpenTau (robot-learning policies; pi07 trained under DeepSpeed ZeRO-2)
What hung: `_global_or_branch_decisions`, an all-reduce inside the policy's forward, fired once per
rollout step. The rank whose episodes ended first left its rollout loop and reached the post-eval
gather while the others were still stepping and all-reducing: ALLREDUCE against ALLGATHER at the
same sequence number, a deadlock at every eval boundary.
Fix (the PR): the all-reduce is gated by a `sync_across_ranks` flag, passed as False by the
independent-rollout entry point.
Expected rankcheck finding: RC103 on the rollout loop's `break` taken when this rank's episode is
done (the simulator's `done` is this rank's data).
(The environment API, names and sizes are reconstructed.)
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

    def _global_or_branch_decisions(self, decisions: torch.Tensor) -> bool:
        if dist.is_available() and dist.is_initialized():
            flag = decisions.any().to(torch.int32).reshape(1)
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
            return bool(flag.item())
        return bool(decisions.any())

    @torch.no_grad()
    def sample_actions(self, obs: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.backbone(obs))
        use_branch = self._global_or_branch_decisions(self.branch_head(hidden) > 0)
        logits = self.action_head(hidden)
        if use_branch:
            logits = logits * 0.5
        return logits.argmax(-1)


def rollout(policy: PI07Policy, env, max_steps: int) -> float:
    obs = env.reset()
    total = 0.0
    for _ in range(max_steps):
        action = policy.sample_actions(torch.as_tensor(obs, dtype=torch.float32))
        obs, reward, done, info = env.step(action.numpy())
        total += reward
        if done:
            break  # expect: RC103
    return total


def eval_in_training(policy: PI07Policy, make_env, accelerator, n_episodes: int, max_steps: int) -> float:
    policy.eval()
    env = make_env(seed=1000 + accelerator.process_index)
    returns = [rollout(policy, env, max_steps) for _ in range(n_episodes)]
    gathered = accelerator.gather(torch.tensor(returns))
    policy.train()
    return gathered.mean().item()
