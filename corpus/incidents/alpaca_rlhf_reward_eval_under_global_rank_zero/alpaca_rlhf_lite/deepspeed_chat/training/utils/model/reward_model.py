"""Trimmed reward model of DeepSpeed-Chat step 2: a causal LM backbone with a scalar value head,
scored on the last non-padding token of the chosen and the rejected answer (pairwise loss)."""
import torch
from torch import nn
from transformers import AutoModel


class RewardModel(nn.Module):
    def __init__(self, base_model, tokenizer, num_padding_at_beginning=0):
        super().__init__()
        self.config = base_model.config
        self.num_padding_at_beginning = num_padding_at_beginning
        hidden = getattr(self.config, "word_embed_proj_dim", None) or self.config.hidden_size
        self.v_head = nn.Linear(hidden, 1, bias=False)
        self.rwtransformer = base_model
        self.PAD_ID = tokenizer.pad_token_id

    def gradient_checkpointing_enable(self):
        self.rwtransformer.gradient_checkpointing_enable()

    def _last_token_scores(self, values, input_ids):
        scores = []
        for v, ids in zip(values, input_ids):
            pad = (ids == self.PAD_ID).nonzero()
            end = pad[self.num_padding_at_beginning].item() if len(pad) > self.num_padding_at_beginning else ids.size(0)
            scores.append(v[end - 1])
        return torch.stack(scores)

    def forward(self, input_ids=None, attention_mask=None, use_cache=False):
        out = self.rwtransformer(input_ids, attention_mask=attention_mask, use_cache=use_cache)
        values = self.v_head(out[0]).squeeze(-1)
        bs = input_ids.shape[0] // 2
        chosen_ids, rejected_ids = input_ids[:bs], input_ids[bs:]
        chosen_scores = self._last_token_scores(values[:bs], chosen_ids)
        rejected_scores = self._last_token_scores(values[bs:], rejected_ids)
        loss = -torch.nn.functional.logsigmoid(chosen_scores - rejected_scores).mean()
        return {
            "loss": loss,
            "chosen_mean_scores": chosen_scores,
            "rejected_mean_scores": rejected_scores,
        }


def create_critic_model(model_name_or_path, tokenizer, num_padding_at_beginning=0):
    base = AutoModel.from_pretrained(model_name_or_path)
    base.config.end_token_id = tokenizer.eos_token_id
    base.config.pad_token_id = base.config.eos_token_id
    base.resize_token_embeddings(len(tokenizer))
    return RewardModel(base, tokenizer, num_padding_at_beginning=num_padding_at_beginning)
