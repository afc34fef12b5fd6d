"""GPT pretraining entry of a Megatron-Bridge style recipe: the forward step, a non-loss hook that
writes the distribution of the last stage's logits to TensorBoard, and the periodic validation.

Part of the reconstruction of https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/6025;
see eval.py for the incident description.
"""
from functools import partial

import torch

from eval import evaluate_and_print_results


def get_batch(data_iterator):
    if data_iterator is None:
        # Middle pipeline stages receive activations, not data.
        return None, None, None, None
    batch = next(data_iterator)
    tokens = batch["tokens"].cuda(non_blocking=True)
    labels = batch["labels"].cuda(non_blocking=True)
    loss_mask = batch["loss_mask"].cuda(non_blocking=True)
    position_ids = batch["position_ids"].cuda(non_blocking=True)
    return tokens, labels, loss_mask, position_ids


def loss_func(loss_mask: torch.Tensor, output_tensor: torch.Tensor, non_loss_data: bool = False):
    if non_loss_data:
        # Collected by the schedule on the last stage when collect_non_loss_data=True.
        return {"logits_abs_max": output_tensor.detach().abs().amax(dim=-1).float().cpu()}
    losses = output_tensor.float().view(-1)
    mask = loss_mask.view(-1).float()
    loss = torch.stack([torch.sum(losses * mask), mask.sum()])
    return loss[0] / loss[1], {"lm loss": loss}


def forward_step(data_iterator, model):
    tokens, labels, loss_mask, position_ids = get_batch(data_iterator)
    output_tensor = model(tokens, position_ids, None, labels=labels)
    return output_tensor, partial(loss_func, loss_mask)


def log_logit_histograms(collected_non_loss_data, step, writer):
    for i, item in enumerate(collected_non_loss_data or []):
        writer.add_histogram(f"validation/logits_abs_max/{i}", item["logits_abs_max"], step)


def maybe_validate(state, model, valid_data_iterator, config):
    step = state.train_state.step
    if config.validation.eval_interval and step % config.validation.eval_interval == 0:
        evaluate_and_print_results(
            state,
            f"iteration {step}",
            forward_step,
            valid_data_iterator,
            model,
            config,
            verbose=False,
            write_to_tensorboard=True,
            process_non_loss_data_func=log_logit_histograms if config.logger.log_logit_histograms else None,
        )
