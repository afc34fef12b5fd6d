"""One prefill forward of a Megatron-Core model on a padded batch. Pipeline stages exchange
activations explicitly and the last stage broadcasts the logits; inside the forward every MoE layer
dispatches its tokens to the experts with an all-to-all over the expert-parallel group."""
import torch
from megatron.core import parallel_state as mpu
from megatron.core.inference.communication_utils import (
    broadcast_from_last_pipeline_stage,
    recv_from_prev_pipeline_rank_,
    send_to_next_pipeline_rank,
)
from megatron.core.utils import get_attr_wrapped_model


@torch.no_grad()
def megatron_prefill(model, input_ids, skip_return_logits=False):
    model.eval()
    batch_size, seq_length = input_ids.shape
    device = input_ids.device
    config = model.config

    first_stage = mpu.is_pipeline_first_stage()
    last_stage = mpu.is_pipeline_last_stage()

    # sequence parallel needs the sequence length to be a multiple of TP
    tp = config.tensor_model_parallel_size
    pad = (tp - seq_length % tp) % tp if config.sequence_parallel else 0
    tokens = input_ids
    if pad:
        tokens = torch.cat([input_ids, torch.zeros(batch_size, pad, dtype=input_ids.dtype, device=device)], dim=-1)
    padded_len = tokens.shape[-1]

    position_ids = torch.arange(padded_len, device=device).unsqueeze(0).expand(batch_size, -1)
    attention_mask = torch.triu(torch.ones(batch_size, 1, padded_len, padded_len, device=device), diagonal=1).bool()

    if not first_stage:
        recv = torch.empty(padded_len, batch_size, config.hidden_size, dtype=config.pipeline_dtype, device=device)
        recv_from_prev_pipeline_rank_(recv)
        get_attr_wrapped_model(model, "set_input_tensor")(recv)

    output = model(tokens, position_ids, attention_mask)

    if not last_stage:
        send_to_next_pipeline_rank(output.to(config.pipeline_dtype))

    logits = output[:, :seq_length, :].contiguous() if last_stage else None
    logits = broadcast_from_last_pipeline_stage([batch_size, seq_length, model.vocab_size], torch.bfloat16, logits)
    return None if skip_return_logits else logits
