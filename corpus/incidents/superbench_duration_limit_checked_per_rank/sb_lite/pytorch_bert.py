"""PyTorch BERT model benchmark (superbench/benchmarks/model_benchmarks/pytorch_bert.py, trimmed)."""

import time

import torch
from transformers import BertConfig, BertModel

from sb_lite.model_base import Optimizer, Precision, logger
from sb_lite.pytorch_base import PytorchBase


class TorchRandomDataset(torch.utils.data.Dataset):
    """Random token ids of a fixed shape, `world_size` times the sample count so every rank gets a full share."""

    def __init__(self, shape, world_size, dtype=torch.float):
        self._len = shape[0] * world_size
        self._data = torch.randint(0, 30000, (self._len, *shape[1:]), dtype=dtype)

    def __getitem__(self, index):
        return self._data[index]

    def __len__(self):
        return self._len


class BertBenchmarkModel(torch.nn.Module):
    """BERT encoder with a classification head on the [CLS] position."""

    def __init__(self, config, num_classes):
        super().__init__()
        self._bert = BertModel(config)
        self._linear = torch.nn.Linear(config.hidden_size, num_classes)

    def forward(self, input):
        outputs = self._bert(input)
        return self._linear(outputs[0][:, 0, :])


class PytorchBERT(PytorchBase):
    """The BERT benchmark class."""

    def __init__(self, name, parameters=""):
        super().__init__(name, parameters)
        self._config = None
        self._supported_precision = [Precision.FLOAT32, Precision.FLOAT16]
        self._optimizer_type = Optimizer.ADAMW
        self._loss_fn = torch.nn.CrossEntropyLoss()

    def add_parser_arguments(self):
        super().add_parser_arguments()
        self._parser.add_argument("--num_classes", type=int, default=100)
        self._parser.add_argument("--hidden_size", type=int, default=1024)
        self._parser.add_argument("--num_hidden_layers", type=int, default=24)
        self._parser.add_argument("--num_attention_heads", type=int, default=16)
        self._parser.add_argument("--intermediate_size", type=int, default=4096)
        self._parser.add_argument("--seq_len", type=int, default=512)

    def _generate_dataset(self):
        self._dataset = TorchRandomDataset(
            [self._args.sample_count, self._args.seq_len], self._world_size, dtype=torch.long
        )
        return len(self._dataset) > 0

    def _create_model(self, precision):
        self._config = BertConfig(
            hidden_size=self._args.hidden_size,
            num_hidden_layers=self._args.num_hidden_layers,
            num_attention_heads=self._args.num_attention_heads,
            intermediate_size=self._args.intermediate_size,
        )
        self._model = BertBenchmarkModel(self._config, self._args.num_classes)
        self._model = self._model.to(dtype=getattr(torch, precision.value))
        if self._gpu_available:
            self._model = self._model.cuda()
        self._target = torch.LongTensor(self._args.batch_size).random_(self._args.num_classes)
        if self._gpu_available:
            self._target = self._target.cuda()
        return True

    def _train_step(self, precision):
        """Define the training process.

        Return:
            The step-time list of every training step.
        """
        duration = []
        curr_step = 0
        while True:
            for idx, sample in enumerate(self._dataloader):
                start = time.time()
                if self._gpu_available:
                    sample = sample.cuda()
                self._optimizer.zero_grad()
                output = self._model(sample)
                loss = self._loss_fn(output, self._target)
                loss.backward()
                self._optimizer.step()
                end = time.time()
                curr_step += 1
                if curr_step > self._args.num_warmup:
                    # Save the step time of every training step, unit is millisecond.
                    duration.append((end - start) * 1000)
                if self._is_finished(curr_step, end):
                    logger.info("Train finished - model: %s, step: %d, rank: %s", self._name, curr_step,
                                self._global_rank)
                    return duration  # expect: RC103
