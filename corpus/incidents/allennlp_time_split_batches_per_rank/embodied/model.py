"""A recurrent behaviour-cloning policy as an AllenNLP `Model`."""

from typing import Dict, Optional

import torch
from allennlp.data import Vocabulary
from allennlp.models import Model


@Model.register("recurrent_policy")
class RecurrentPolicy(Model):
    def __init__(self, vocab: Vocabulary, observation_dim: int = 512, hidden_dim: int = 256,
                 num_actions: int = 12) -> None:
        super().__init__(vocab)
        self._encoder = torch.nn.Sequential(torch.nn.Linear(observation_dim, hidden_dim), torch.nn.ReLU())
        self._rnn = torch.nn.GRU(hidden_dim, hidden_dim, batch_first=True)
        self._head = torch.nn.Linear(hidden_dim, num_actions)
        self._loss = torch.nn.CrossEntropyLoss(ignore_index=-1)
        self._loss_total = 0.0
        self._num_windows = 0

    def forward(  # type: ignore
        self,
        observations: torch.Tensor,
        actions: torch.Tensor,
        mask: torch.Tensor,
        hidden_state: Optional[torch.Tensor] = None,
    ) -> Dict[str, torch.Tensor]:
        features = self._encoder(observations)
        outputs, hidden_state = self._rnn(features, hidden_state)
        logits = self._head(outputs)
        targets = actions.masked_fill(~mask, -1)
        loss = self._loss(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        self._loss_total += loss.item()
        self._num_windows += 1
        return {"loss": loss, "logits": logits, "hidden_state": hidden_state}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"window_loss": self._loss_total / max(self._num_windows, 1)}
        if reset:
            self._loss_total, self._num_windows = 0.0, 0
        return metrics
