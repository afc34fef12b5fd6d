"""A reward model scores each generated sequence at its last token: `logits[arange(n), last]`
has one value per sequence, as many as the rank's batch, however long each rank decoded; the
gathered scores have one shape on every rank (trl's get_reward)."""
import torch
from accelerate import Accelerator


def last_token(responses: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    is_pad = responses == pad_token_id
    positions = torch.arange(responses.size(-1)).expand_as(responses)
    return torch.where(is_pad, responses.size(-1), positions).min(dim=-1).values - 1


def score(reward_model, responses: torch.Tensor, pad_token_id: int) -> torch.Tensor:
    hidden = reward_model.backbone(input_ids=responses, attention_mask=responses != pad_token_id).last_hidden_state
    logits = reward_model.score(hidden).squeeze(-1)
    return logits[torch.arange(logits.size(0), device=logits.device), last_token(responses, pad_token_id)]


def evaluate(policy, reward_model, prompts: torch.Tensor, pad_token_id: int):
    accelerator = Accelerator()
    with torch.no_grad():
        responses = policy.generate(input_ids=prompts, max_new_tokens=64, do_sample=True)
        rewards = score(reward_model, responses, pad_token_id)
    return accelerator.gather(rewards).mean().item()
