"""An AllenNLP GradientDescentTrainer subclass cuts each batch of episodes into time windows and runs
one forward/backward per window through `self._pytorch_model`, the DistributedDataParallel wrapper
the trainer built: how many windows depends on the longest episode this process drew, so the
processes run different numbers of DDP backwards and the one with more waits in the all-reduce."""
import math
from typing import Dict

from allennlp.common import util as common_util
from allennlp.training import GradientDescentTrainer


def windows(batch, max_steps: int):
    longest = int(batch["mask"].sum(dim=1).max().item())
    return [{k: v[:, i * max_steps:(i + 1) * max_steps] for k, v in batch.items()} for i in range(max(1, math.ceil(longest / max_steps)))]


class WindowedTrainer(GradientDescentTrainer):
    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        self._pytorch_model.train()
        for batch_group in common_util.lazy_groups_of(iter(self.data_loader), self._num_gradient_accumulation_steps):
            self.optimizer.zero_grad()
            for batch in batch_group:
                for window in windows(batch, 32):  # expect: RC103
                    output = self._pytorch_model(**window)
                    output["loss"].backward()
            self.optimizer.step()
        return {}
