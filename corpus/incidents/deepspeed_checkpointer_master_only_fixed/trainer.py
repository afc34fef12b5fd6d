"""Safe twin of deepspeed_checkpointer_master_only: the trainer asks the checkpointer whether this
rank must call it (`call_on_rank`), and the DeepSpeed checkpointer answers True on every rank, so
every rank reaches `DeepSpeedEngine.save_checkpoint`.

Thread: https://github.com/allenai/allennlp/pull/4693
"""
import logging

import deepspeed
import torch.distributed as dist

from checkpointer import Checkpointer

logger = logging.getLogger(__name__)


class DeepspeedTrainer:
    def __init__(self, model, optimizer, data_loader, deepspeed_config, checkpointer: Checkpointer = None, num_epochs: int = 10):
        self._rank = dist.get_rank()
        self._master = self._rank == 0
        self._checkpointer = checkpointer
        self._num_epochs = num_epochs
        self.data_loader = data_loader
        self.model_engine, self.optimizer, _, _ = deepspeed.initialize(
            model=model, optimizer=optimizer, model_parameters=model.parameters(), config=deepspeed_config
        )

    def get_checkpoint_state(self):
        return self.model_engine.module.state_dict(), {"optimizer": self.optimizer.state_dict()}

    def _train_epoch(self, epoch: int) -> float:
        total = 0.0
        for batch in self.data_loader:
            output = self.model_engine(**batch)
            self.model_engine.backward(output["loss"])
            self.model_engine.step()
            total += output["loss"].item()
        return total

    def _try_train(self):
        for epoch in range(self._num_epochs):
            loss = self._train_epoch(epoch)
            if self._master:
                logger.info("epoch %d loss %.4f", epoch, loss)
            if self._checkpointer is not None and self._checkpointer.call_on_rank(self._rank):
                self._checkpointer.save_checkpoint(epoch, self)
            dist.barrier()
