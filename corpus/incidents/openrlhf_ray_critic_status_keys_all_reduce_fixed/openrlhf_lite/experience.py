"""Rollout generation with the local actor and scoring with the remote reference, reward and critic
models (Ray actor handles)."""
from dataclasses import dataclass

import ray
import torch
import torch.nn.functional as F


@dataclass
class Experience:
    sequences: torch.Tensor
    action_log_probs: torch.Tensor
    values: torch.Tensor
    returns: torch.Tensor
    advantages: torch.Tensor
    attention_mask: torch.Tensor
    action_mask: torch.Tensor
    info: dict

    def to_device(self, device):
        for name in ("sequences", "action_log_probs", "values", "returns", "advantages", "attention_mask", "action_mask"):
            setattr(self, name, getattr(self, name).to(device))
        self.info = {k: v.to(device) for k, v in self.info.items()}


class ReplayBuffer(torch.utils.data.Dataset):
    def __init__(self, sample_batch_size):
        self.sample_batch_size = sample_batch_size
        self.items = []

    def append(self, experience):
        for i in range(experience.sequences.size(0)):
            self.items.append({
                "sequences": experience.sequences[i].cpu(),
                "action_log_probs": experience.action_log_probs[i].cpu(),
                "values": experience.values[i].cpu(),
                "returns": experience.returns[i].cpu(),
                "advantages": experience.advantages[i].cpu(),
                "attention_mask": experience.attention_mask[i].cpu(),
                "action_mask": experience.action_mask[i].cpu(),
                "info": {k: v[i].cpu() for k, v in experience.info.items()},
            })

    def clear(self):
        self.items.clear()

    def normalize(self, key, strategy):
        values = torch.stack([item[key].mean() for item in self.items])
        mean = strategy.all_reduce(values.mean())
        std = (strategy.all_reduce(((values - mean) ** 2).mean())).clamp_min(1e-8).sqrt()
        for item in self.items:
            item[key] = (item[key] - mean) / std

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]

    @staticmethod
    def collate_fn(items):
        def stack(key):
            return torch.stack([it[key] for it in items])

        info = {k: torch.stack([it["info"][k] for it in items]) for k in items[0]["info"]}
        return Experience(stack("sequences"), stack("action_log_probs"), stack("values"), stack("returns"),
                          stack("advantages"), stack("attention_mask"), stack("action_mask"), info)


class RemoteExperienceMaker:
    def __init__(self, actor, critic, reward_models, initial_model, strategy, kl_coef=0.01, gamma=1.0, lambd=0.95):
        self.actor = actor
        self.critic = critic
        self.reward_models = reward_models
        self.initial_model = initial_model
        self.strategy = strategy
        self.kl_coef = kl_coef
        self.gamma = gamma
        self.lambd = lambd

    @torch.no_grad()
    def make_experience(self, input_ids, attention_mask, **generate_kwargs):
        self.actor.eval()
        sequences, attention_mask, action_mask = self.actor.generate(input_ids, attention_mask, **generate_kwargs)
        num_actions = action_mask.size(1)

        seq_cpu, mask_cpu = sequences.cpu(), attention_mask.cpu()
        base_ref = self.initial_model.forward.remote(seq_cpu, num_actions, mask_cpu)
        value_ref = self.critic.forward.remote(seq_cpu, action_mask.cpu(), mask_cpu)
        reward_refs = [rm.forward.remote(seq_cpu, mask_cpu) for rm in self.reward_models]

        action_log_probs = self.actor(sequences, num_actions, attention_mask)
        base_log_probs, value, *rewards = ray.get([base_ref, value_ref] + reward_refs)
        device = action_log_probs.device
        base_log_probs, value = base_log_probs.to(device), value.to(device)
        reward = torch.stack([r.to(device) for r in rewards]).sum(dim=0)

        kl = (action_log_probs - base_log_probs) * action_mask
        per_token_reward = -self.kl_coef * kl
        last = action_mask.long().sum(dim=1) - 1
        per_token_reward[torch.arange(len(last)), last] += reward
        advantages, returns = self._gae(value, per_token_reward, action_mask)

        info = {
            "kl": (kl.sum(dim=1) / action_mask.sum(dim=1)),
            "reward": reward,
            "return": returns.sum(dim=1),
            "response_length": action_mask.float().sum(dim=1),
            "total_length": attention_mask.float().sum(dim=1),
        }
        return Experience(sequences, action_log_probs, value, returns, advantages, attention_mask, action_mask, info)

    def _gae(self, values, rewards, mask):
        values, rewards = values * mask, rewards * mask
        lastgaelam = torch.zeros_like(values[:, 0])
        advantages = torch.zeros_like(values)
        for t in reversed(range(values.size(1))):
            next_value = values[:, t + 1] if t + 1 < values.size(1) else 0.0
            delta = rewards[:, t] + self.gamma * next_value - values[:, t]
            lastgaelam = delta + self.gamma * self.lambd * lastgaelam
            advantages[:, t] = lastgaelam
        return advantages, advantages + values


def masked_log_probs(logits, labels):
    return torch.gather(F.log_softmax(logits.float(), dim=-1), -1, labels.unsqueeze(-1)).squeeze(-1)
