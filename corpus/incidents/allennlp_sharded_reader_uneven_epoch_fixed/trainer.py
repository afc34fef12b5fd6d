"""Safe twin of allennlp_sharded_reader_uneven_epoch/trainer.py: the fix of allennlp#3781. At the top
of every training and validation batch each worker all-reduces a `done` flag and breaks if any
worker has finished its data; a worker that completes its whole epoch all-reduces `done = 1` once,
so the workers with excess data stop early instead of waiting in collectives nobody joins.

Thread: https://github.com/allenai/allennlp/pull/3781
"""
import logging
import math
import time
from typing import Any, Dict, Iterable, Optional, Tuple

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from allennlp.common import Tqdm
from allennlp.common import util as common_util
from allennlp.data.instance import Instance
from allennlp.data.iterators.data_iterator import DataIterator, TensorDict
from allennlp.models.model import Model
from allennlp.nn import util as nn_util
from allennlp.training import util as training_util

logger = logging.getLogger(__name__)


class Trainer:
    def __init__(
        self,
        model: Model,
        optimizer: torch.optim.Optimizer,
        iterator: DataIterator,
        train_dataset: Iterable[Instance],
        validation_dataset: Optional[Iterable[Instance]] = None,
        validation_iterator: DataIterator = None,
        shuffle: bool = True,
        num_epochs: int = 20,
        cuda_device: int = -1,
        grad_norm: Optional[float] = None,
        distributed: bool = False,
        rank: int = 0,
        world_size: int = 1,
        num_gradient_accumulation_steps: int = 1,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.iterator = iterator
        self.train_data = train_dataset
        self._validation_data = validation_dataset
        self._validation_iterator = validation_iterator
        self.shuffle = shuffle
        self._num_epochs = num_epochs
        self.cuda_device = cuda_device
        self._grad_norm = grad_norm
        self._distributed = distributed
        self._rank = rank
        self._master = self._rank == 0
        self._world_size = world_size
        self._num_gradient_accumulation_steps = num_gradient_accumulation_steps
        self._batch_num_total = 0

        # A `Model` object is wrapped by ddp, but assigning the wrapped model to `self.model` would
        # break `Model.get_metrics` etc.; the wrapped reference is used for `__call__`, `train`
        # and `eval` only.
        if self._distributed:
            self._pytorch_model = DistributedDataParallel(
                self.model, device_ids=[self.cuda_device], find_unused_parameters=True
            )
        else:
            self._pytorch_model = self.model

    def rescale_gradients(self) -> Optional[float]:
        return training_util.rescale_gradients(self.model, self._grad_norm)

    def batch_loss(self, batch: TensorDict, for_training: bool) -> torch.Tensor:
        """Does a forward pass on the given batch and returns the `loss` value in the result."""
        batch = nn_util.move_to_device(batch, self.cuda_device)
        output_dict = self._pytorch_model(**batch)
        try:
            loss = output_dict["loss"]
            if for_training:
                loss += self.model.get_regularization_penalty()
        except KeyError:
            if for_training:
                raise RuntimeError("The model you are trying to optimize does not contain a 'loss' key in the output of model.forward(inputs).")
            loss = None
        return loss

    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        """Trains one epoch and returns metrics."""
        logger.info("Epoch %d/%d", epoch, self._num_epochs - 1)
        train_loss = 0.0
        self._pytorch_model.train()

        batch_generator = self.iterator(self.train_data, num_epochs=1, shuffle=self.shuffle)
        batch_group_generator = common_util.lazy_groups_of(batch_generator, self._num_gradient_accumulation_steps)
        num_training_batches = math.ceil(
            self.iterator.get_num_batches(self.train_data) / self._num_gradient_accumulation_steps
        )
        # Only the master's progress is shown.
        if self._master:
            batch_group_generator_tqdm = Tqdm.tqdm(batch_group_generator, total=num_training_batches)
        else:
            batch_group_generator_tqdm = batch_group_generator

        batches_this_epoch = 0
        logger.info("Training")
        done_early = False
        for batch_group in batch_group_generator_tqdm:
            if self._distributed:
                # Check whether the other workers have stopped already (due to differing amounts of
                # data in each). If so, we can't proceed because we would hang when we hit the
                # barrier implicit in Model.forward. We use a IntTensor instead a BoolTensor
                # here because NCCL process groups apparently don't support BoolTensor.
                done = torch.tensor(0, device=self.cuda_device)
                torch.distributed.all_reduce(done, torch.distributed.ReduceOp.SUM)
                if done.item() > 0:
                    done_early = True
                    logger.warning(
                        f"Worker {torch.distributed.get_rank()} finishing training early! "
                        "This implies that there is an imbalance in your training "
                        "data across the workers and that some amount of it will be "
                        "ignored. A small amount of this is fine, but a major imbalance "
                        "should be avoided. Note: This warning will appear unless your "
                        "data is perfectly balanced."
                    )
                    break

            batches_this_epoch += 1
            self._batch_num_total += 1

            self.optimizer.zero_grad()
            for batch in batch_group:
                loss = self.batch_loss(batch, for_training=True)
                if torch.isnan(loss):
                    raise ValueError("nan loss encountered")
                loss = loss / len(batch_group)
                loss.backward()
                train_loss += loss.item()

            self.rescale_gradients()
            self.optimizer.step()

            # Update the description with the latest metrics
            metrics = training_util.get_metrics(
                self.model,
                train_loss,
                batches_this_epoch,
                world_size=self._world_size,
                cuda_device=[self.cuda_device],
            )
            if self._master:
                description = training_util.description_from_metrics(metrics)
                batch_group_generator_tqdm.set_description(description, refresh=False)

        if self._distributed and not done_early:
            logger.warning(f"Worker {torch.distributed.get_rank()} completed its entire epoch (training).")
            # Indicate that we're done so that any workers that have remaining data stop the epoch early.
            done = torch.tensor(1, device=self.cuda_device)
            torch.distributed.all_reduce(done, torch.distributed.ReduceOp.SUM)
            assert done.item()

        # Let all workers finish their epoch before computing the final statistics for the epoch.
        if self._distributed:
            dist.barrier()

        metrics = training_util.get_metrics(
            self.model,
            train_loss,
            batches_this_epoch,
            reset=True,
            world_size=self._world_size,
            cuda_device=[self.cuda_device],
        )
        return metrics

    def _validation_loss(self) -> Tuple[float, int]:
        """Computes the validation loss. Returns it and the number of batches."""
        logger.info("Validating")
        self._pytorch_model.eval()

        val_iterator = self._validation_iterator if self._validation_iterator is not None else self.iterator
        val_generator = val_iterator(self._validation_data, num_epochs=1, shuffle=False)
        num_validation_batches = val_iterator.get_num_batches(self._validation_data)
        val_generator_tqdm = Tqdm.tqdm(val_generator, total=num_validation_batches)
        batches_this_epoch = 0
        val_loss = 0
        done_early = False
        for batch in val_generator_tqdm:
            if self._distributed:
                # Check whether the other workers have stopped already (due to differing amounts of
                # data in each). If so, we can't proceed because we would hang when we hit the
                # barrier implicit in Model.forward.
                done = torch.tensor(0, device=self.cuda_device)
                torch.distributed.all_reduce(done, torch.distributed.ReduceOp.SUM)
                if done.item() > 0:
                    done_early = True
                    logger.warning(
                        f"Worker {torch.distributed.get_rank()} finishing validation early! "
                        "This implies that there is an imbalance in your validation "
                        "data across the workers and that some amount of it will be "
                        "ignored."
                    )
                    break

            loss = self.batch_loss(batch, for_training=False)
            if loss is not None:
                batches_this_epoch += 1
                val_loss += loss.detach().cpu().numpy()

            val_metrics = training_util.get_metrics(
                self.model,
                val_loss,
                batches_this_epoch,
                world_size=self._world_size,
                cuda_device=[self.cuda_device],
            )
            description = training_util.description_from_metrics(val_metrics)
            val_generator_tqdm.set_description(description, refresh=False)

        if self._distributed and not done_early:
            logger.warning(f"Worker {torch.distributed.get_rank()} completed its entire epoch (validation).")
            # Indicate that we're done so that any workers that have remaining data stop validation early.
            done = torch.tensor(1, device=self.cuda_device)
            torch.distributed.all_reduce(done, torch.distributed.ReduceOp.SUM)
            assert done.item()

        return val_loss, batches_this_epoch

    def train(self) -> Dict[str, Any]:
        logger.info("Beginning training.")
        metrics: Dict[str, Any] = {}
        val_metrics: Dict[str, float] = {}
        training_start_time = time.time()

        for epoch in range(0, self._num_epochs):
            train_metrics = self._train_epoch(epoch)

            if self._validation_data is not None:
                with torch.no_grad():
                    val_loss, num_batches = self._validation_loss()

                    # It is safe again to wait till the validation is done.
                    if self._distributed:
                        dist.barrier()

                    val_metrics = training_util.get_metrics(
                        self.model,
                        val_loss,
                        num_batches,
                        reset=True,
                        world_size=self._world_size,
                        cuda_device=[self.cuda_device],
                    )

            for key, value in train_metrics.items():
                metrics["training_" + key] = value
            for key, value in val_metrics.items():
                metrics["validation_" + key] = value
            metrics["epoch"] = epoch
            metrics["training_duration"] = time.time() - training_start_time

            if self._master:
                logger.info("Epoch %d metrics: %s", epoch, metrics)

            # Wait for the master before the next epoch.
            if self._distributed:
                dist.barrier()

        return metrics
