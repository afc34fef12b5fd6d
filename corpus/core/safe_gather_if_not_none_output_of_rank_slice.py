"""Evaluation in the shape of gpt-neox's eval adapter: each data-parallel rank runs the model on its
slice of the batch (`inps[dp_rank * chunk:(dp_rank + 1) * chunk]`, handed over as a one-batch
iterator) and gathers the logits when the forward step returns some (it returns none on the
pipeline stages that are not the last). The rank decides which rows go in, not whether logits come
out: `logits is not None` is alike on every rank of the gather."""
from functools import partial

import torch
import torch.distributed as dist
import torch.nn.functional as F


def forward_step_fn(data_iterator, model, return_logits=False):
    batch = next(data_iterator)
    if model.is_pipe_parallel:
        return None, None
    logits = model(batch["text"])
    return None, logits


class EvalAdapter:
    def __init__(self, model):
        self.model = model
        self.dp_rank = dist.get_rank()
        self.dp_world_size = dist.get_world_size()
        self._forward_step_fn = partial(forward_step_fn, return_logits=True)

    def _dp_scatter(self, inps):
        chunk_size = inps.shape[0] // self.dp_world_size
        inps = inps[self.dp_rank * chunk_size:(self.dp_rank + 1) * chunk_size]
        return iter([{"text": F.pad(inps, pad=(0, 1))}]), False

    def _dp_gather(self, logits):
        if logits is not None:
            tensor_list = [torch.zeros_like(logits) for _ in range(self.dp_world_size)]
            dist.all_gather(tensor_list, logits)
            logits = torch.cat(tensor_list, dim=0)
            return logits

    def _model_call(self, inps):
        inps, padded = self._dp_scatter(inps)
        _, logits = self._forward_step_fn(model=self.model, data_iterator=inps)
        logits = self._dp_gather(logits)
        return logits



def evaluate(model, batches):
    adapter = EvalAdapter(model)
    return [adapter._model_call(inps) for inps in batches]
