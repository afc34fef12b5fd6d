"""The loadable seq2seq trainer (onmt/trainer.py), trimmed to the data-parallel training path:
token-count normalization agreed with `all_gather_list`, gradient accumulation over sub-batches with
the "cuda OOM - batch removed" handler, and the gradient all-reduce before the optimizer step, in
which every trainable parameter takes part (zeros for a removed batch)."""
import logging
import sys
import traceback

import torch
import torch.nn.functional as F

import onmt_lite.utils
from onmt_lite.utils.statistics import Statistics

logger = logging.getLogger(__name__)


class Optimizer(object):
    """onmt.utils.Optimizer, reduced to the calls the trainer makes."""

    def __init__(self, optimizer, learning_rate, amp=False):
        self._optimizer = optimizer
        self._learning_rate = learning_rate
        self._training_step = 1
        self.amp = amp
        self._scaler = torch.cuda.amp.GradScaler() if amp else None

    @property
    def training_step(self):
        return self._training_step

    def learning_rate(self):
        return self._learning_rate

    def zero_grad(self, set_to_none=True):
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def backward(self, loss):
        if self._scaler is not None:
            self._scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self):
        if self._scaler is not None:
            self._scaler.step(self._optimizer)
            self._scaler.update()
        else:
            self._optimizer.step()
        self._training_step += 1


def build_trainer(opt, device_id, model, optim, model_saver=None):
    n_gpu = opt.world_size
    gpu_rank = opt.gpu_ranks[device_id] if device_id >= 0 else -1
    return Trainer(model, optim, opt.accum_count, n_gpu, gpu_rank, opt.parallel_mode,
                   opt.report_every, model_saver=model_saver)


class Trainer(object):
    def __init__(self, model, optim, accum_count=1, n_gpu=1, gpu_rank=1,
                 parallel_mode="data_parallel", report_every=50, model_saver=None):
        self.model = model
        self.optim = optim
        self.accum_count = accum_count
        self.n_gpu = n_gpu
        self.gpu_rank = gpu_rank
        self.parallel_mode = parallel_mode
        self.report_every = report_every
        self.model_saver = model_saver
        self.model.train()

    def _accum_batches(self, iterator):
        batches = []
        normalization = 0
        for batch in iterator:
            batches.append(batch)
            normalization += int((batch["tgt"][:, 1:, 0] != batch["pad_idx"]).sum())
            if len(batches) == self.accum_count:
                yield batches, normalization
                batches = []
                normalization = 0
        if batches:
            yield batches, normalization

    def train(self, train_iter, train_steps, save_checkpoint_steps=5000):
        total_stats = Statistics()
        torch.cuda.empty_cache()
        for i, (batches, normalization) in enumerate(self._accum_batches(train_iter)):
            step = self.optim.training_step
            if self.n_gpu > 1 and self.parallel_mode == "data_parallel":
                normalization = sum(onmt_lite.utils.all_gather_list(normalization))

            self._gradient_accumulation(batches, normalization, total_stats)

            if step % self.report_every == 0 and self.gpu_rank <= 0:
                logger.info("Step %d; acc: %6.2f; ppl: %5.2f", step, total_stats.accuracy(),
                            total_stats.ppl())
            if self.model_saver is not None and step % save_checkpoint_steps == 0:
                self.model_saver.save(step)
            if train_steps > 0 and step >= train_steps:
                break
        return total_stats

    def _compute_loss(self, batch, model_out):
        tgt = batch["tgt"][:, 1:, 0]
        logits = self.model.generator(model_out)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1),
                               ignore_index=batch["pad_idx"], reduction="sum")
        non_pad = tgt.ne(batch["pad_idx"])
        n_correct = logits.argmax(-1).eq(tgt).masked_select(non_pad).sum().item()
        return loss, Statistics(loss.item(), non_pad.sum().item(), n_correct)

    def _gradient_accumulation(self, true_batches, normalization, total_stats):
        """Perform a backward on the loss of each sub_batch and finally update the params at the
        end of the big batch."""
        if self.accum_count > 1:
            self.optim.zero_grad(set_to_none=True)

        for k, batch in enumerate(true_batches):
            if self.accum_count == 1:
                self.optim.zero_grad(set_to_none=True)
            try:
                with torch.cuda.amp.autocast(enabled=self.optim.amp):
                    model_out = self.model(batch["src"], batch["tgt"][:, :-1, 0], batch["srclen"])
                    loss, batch_stats = self._compute_loss(batch, model_out)
                if loss is not None:
                    loss /= normalization
                    self.optim.backward(loss)
                total_stats.update(batch_stats)

            except Exception as exc:
                trace_content = traceback.format_exc()
                if "CUDA out of memory" in trace_content:
                    logger.info("Step %d, cuda OOM - batch removed", self.optim.training_step)
                    torch.cuda.empty_cache()
                    if self.n_gpu > 1 and self.parallel_mode == "tensor_parallel":
                        torch.distributed.destroy_process_group()
                        sys.exit()
                else:
                    traceback.print_exc()
                    raise exc

        # in case of multi step gradient accumulation,
        # update only after accum batches
        if self.n_gpu > 1 and self.parallel_mode == "data_parallel":
            # a batch removed after an OOM leaves no gradient (or only part of them): contribute
            # zeros for those, so that every rank all-reduces a buffer of the same size
            grads = [
                p.grad.data if p.grad is not None else torch.zeros_like(p.data)
                for p in self.model.parameters()
                if p.requires_grad
            ]
            onmt_lite.utils.all_reduce_and_rescale_tensors(grads, float(self.n_gpu))

        self.optim.step()
