"""The look-alike: the same AllenNLP trainer subclass, but every batch is cut into the configured
number of windows (the reader pads every episode to `max_len`), so every process runs the same
number of forwards and backwards through the DistributedDataParallel wrapper."""
from typing import Dict

from allennlp.common import util as common_util
from allennlp.training import GradientDescentTrainer


class WindowedTrainer(GradientDescentTrainer):
    def __init__(self, *args, num_windows: int = 4, window: int = 32, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._num_windows = num_windows
        self._window = window

    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        self._pytorch_model.train()
        for batch_group in common_util.lazy_groups_of(iter(self.data_loader), self._num_gradient_accumulation_steps):
            self.optimizer.zero_grad()
            for batch in batch_group:
                for i in range(self._num_windows):
                    window = {k: v[:, i * self._window:(i + 1) * self._window] for k, v in batch.items()}
                    output = self._pytorch_model(**window)
                    output["loss"].backward()
            self.optimizer.step()
        return {}
