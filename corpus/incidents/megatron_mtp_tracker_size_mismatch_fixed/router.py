"""Top-k router of the MoE layers: it records the load-balancing loss of its layer, counting the MTP
layers after the decoder layers."""
import torch

from moe_utils import save_to_aux_losses_tracker


class TopKRouter(torch.nn.Module):
    def __init__(self, config, layer_number: int):
        super().__init__()
        self.config = config
        self.layer_number = layer_number
        self.weight = torch.nn.Parameter(torch.empty(config.num_moe_experts, config.hidden_size))

    def apply_load_balancing_loss(self, probs, tokens_per_expert):
        aux_loss = (probs.mean(0) * tokens_per_expert.float() / tokens_per_expert.sum()).sum() * self.config.num_moe_experts
        num_layers = self.config.num_layers + (self.config.mtp_num_layers or 0)
        save_to_aux_losses_tracker("load_balancing_loss", aux_loss, self.layer_number, num_layers)
        return aux_loss

    def forward(self, hidden):
        logits = hidden @ self.weight.t()
        probs = torch.softmax(logits.float(), dim=-1)
        topk = probs.topk(self.config.moe_router_topk, dim=-1).indices
        tokens_per_expert = torch.bincount(topk.flatten(), minlength=self.config.num_moe_experts)
        self.apply_load_balancing_loss(probs, tokens_per_expert)
        return probs, topk
