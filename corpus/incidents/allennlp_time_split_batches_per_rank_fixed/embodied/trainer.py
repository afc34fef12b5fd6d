"""GradientDescentTrainer with truncated back-propagation through time: every batch of episodes is cut into
windows along the time dimension and each window gets its own forward/backward, carrying the GRU state."""

import logging
import math
import time
from typing import Dict, Union

import torch
import torch.distributed as dist
from allennlp.common import Tqdm
from allennlp.common import util as common_util
from allennlp.training import util as training_util
from allennlp.training.trainer import GradientDescentTrainer, Trainer

from embodied.trajectories import split_batch_along_time

logger = logging.getLogger(__name__)


@Trainer.register("time_split")
class TimeSplitTrainer(GradientDescentTrainer):
    def __init__(self, *args, max_steps_per_window: int = 32, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._max_steps_per_window = max_steps_per_window

    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        logger.info("Epoch %d/%d", epoch, self._num_epochs - 1)
        train_loss = 0.0
        batch_loss = 0.0
        self._pytorch_model.train()

        batch_generator = iter(self.data_loader)
        batch_group_generator = common_util.lazy_groups_of(batch_generator, self._num_gradient_accumulation_steps)
        num_training_batches: Union[int, float]
        try:
            num_training_batches = math.ceil(len(self.data_loader) / self._num_gradient_accumulation_steps)
        except TypeError:
            num_training_batches = float("inf")
        if self._primary:
            batch_group_generator_tqdm = Tqdm.tqdm(batch_group_generator, total=num_training_batches)
        else:
            batch_group_generator_tqdm = batch_group_generator

        self._last_log = time.time()
        batches_this_epoch = 0
        if self._batch_num_total is None:
            self._batch_num_total = 0

        done_early = False
        for batch_group in batch_group_generator_tqdm:
            if done_early:
                break

            batches_this_epoch += 1
            self._batch_num_total += 1
            batch_num_total = self._batch_num_total

            # Zero gradients.
            for param_group in self.optimizer.param_groups:
                for p in param_group["params"]:
                    p.grad = None

            batch_loss = 0.0
            batch_group_outputs = []
            for batch in batch_group:
                # Truncated BPTT: one forward/backward per time window, state carried over (detached).
                splits = split_batch_along_time(batch, self._max_steps_per_window)
                hidden_state = None
                for split_batch in splits:
                    if self._distributed:
                        # The check whether the other workers have stopped already happens before every
                        # window: each forward/backward below is matched by one on every other worker, and
                        # a worker that has run out of data stops the others here (possibly mid-batch).
                        done = torch.tensor(0, device=self.cuda_device)
                        torch.distributed.all_reduce(done, torch.distributed.ReduceOp.SUM)
                        if done.item() > 0:
                            done_early = True
                            logger.warning(f"Worker {torch.distributed.get_rank()} finishing training early!")
                            break
                    output_dict = self._pytorch_model(**split_batch, hidden_state=hidden_state)
                    hidden_state = output_dict["hidden_state"].detach()
                    batch_group_outputs.append(output_dict)
                    loss = output_dict["loss"] / (len(batch_group) * len(splits))
                    if torch.isnan(loss):
                        raise ValueError("nan loss encountered")
                    batch_loss += loss.item()
                    loss.backward()
                if done_early:
                    break

            if len(batch_group_outputs) <= 0:
                continue

            train_loss += batch_loss
            self.rescale_gradients()
            if self._learning_rate_scheduler:
                self._learning_rate_scheduler.step_batch(batch_num_total)
            self.optimizer.step()

            metrics = training_util.get_metrics(
                self.model, train_loss, None, batch_loss, None, batches_this_epoch,
                world_size=self._world_size, cuda_device=self.cuda_device,
            )
            if self._primary:
                description = training_util.description_from_metrics(metrics)
                batch_group_generator_tqdm.set_description(description, refresh=False)
                if self._checkpointer is not None:
                    self._checkpointer.maybe_save_checkpoint(self, epoch, batches_this_epoch)

        if self._distributed and not done_early:
            logger.warning(f"Worker {torch.distributed.get_rank()} completed its entire epoch (training).")
            # Indicate that we're done so that any workers that have remaining data stop the epoch early.
            done = torch.tensor(1, device=self.cuda_device)
            torch.distributed.all_reduce(done, torch.distributed.ReduceOp.SUM)
            assert done.item()

        # Let all workers finish their epoch before computing the final statistics for the epoch.
        if self._distributed:
            dist.barrier()

        return training_util.get_metrics(
            self.model, train_loss, None, batch_loss=None, batch_reg_loss=None,
            num_batches=batches_this_epoch, reset=True, world_size=self._world_size,
            cuda_device=self.cuda_device,
        )
