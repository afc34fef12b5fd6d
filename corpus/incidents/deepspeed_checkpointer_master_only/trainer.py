"""A DeepSpeed trainer for allennlp: after each epoch the master process asks the checkpointer to
save.

Thread: https://github.com/allenai/allennlp/pull/4693 (Deepspeed integration)
Project: allenai/allennlp
What hung: "(All ranks) My trainer tells my checkpointer to save if it's the master process ->
(Rank 0) My checkpointer delegates to DeepspeedEngine.save_checkpoint -> (Rank 0) save_checkpoint
calls dist.barrier() -> (Ranks 1-n) The other workers never get a chance to make the above barrier
call" -- the culprit was the `if self._master and self._checkpointer is not None:` check.
Fix (the PR author's, in the thread): let the checkpointer decide which ranks call it
(`call_on_rank`), and have the DeepSpeed checkpointer answer True on every rank.
Expected rankcheck finding: RC101 on the guarded `self._checkpointer.save_checkpoint(...)` call,
which reaches `DeepSpeedEngine.save_checkpoint` through DeepspeedCheckpointer.
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
            if self._master and self._checkpointer is not None:
                self._checkpointer.save_checkpoint(epoch, self)  # expect: RC101
            dist.barrier()
