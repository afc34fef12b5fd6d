"""PyTorch model-benchmark base class (superbench/benchmarks/model_benchmarks/pytorch_base.py, trimmed)."""

import os
from datetime import timedelta

import torch
import transformers
from torch.distributed import PrefixStore, TCPStore
from torch.utils.data import DataLoader

from sb_lite.model_base import DistributedBackend, DistributedImpl, ModelBenchmark, Optimizer, logger


class PytorchBase(ModelBenchmark):
    """The base class of PyTorch model benchmarks."""

    def __init__(self, name, parameters=""):
        super().__init__(name, parameters)
        torch.backends.cudnn.benchmark = True

    def _judge_gpu_availability(self):
        self._gpu_available = not self._args.no_gpu and torch.cuda.is_available()

    def _init_distributed_setting(self):
        if self._args.distributed_impl == DistributedImpl.DDP:
            if os.environ.get("WORLD_SIZE") is None or os.environ.get("LOCAL_RANK") is None:
                logger.error("Can not find WORLD_SIZE or LOCAL_RANK in env variables - model: %s", self._name)
                return False
            port = int(os.environ["MASTER_PORT"]) + 1
            addr = os.environ["MASTER_ADDR"]
            self._global_rank = int(os.environ["RANK"])
            self._local_rank = int(os.environ["LOCAL_RANK"])
            self._world_size = int(os.environ["WORLD_SIZE"])
            store = PrefixStore(
                self._name, TCPStore(addr, port, self._world_size, self._global_rank == 0, timedelta(seconds=300))
            )
            torch.distributed.init_process_group(
                backend=self._args.distributed_backend.value,
                timeout=timedelta(seconds=300),
                rank=self._global_rank,
                world_size=self._world_size,
                store=store,
            )
            if self._gpu_available:
                torch.cuda.set_device(self._local_rank)
        return True

    def _init_dataloader(self):
        train_sampler = None
        if self._args.distributed_impl == DistributedImpl.DDP:
            train_sampler = torch.utils.data.distributed.DistributedSampler(self._dataset)
        self._dataloader = DataLoader(
            dataset=self._dataset,
            batch_size=self._args.batch_size,
            shuffle=False,
            num_workers=8,
            sampler=train_sampler,
            drop_last=True,
            pin_memory=self._args.pin_memory,
        )
        return True

    def _create_optimizer(self):
        if self._args.distributed_impl == DistributedImpl.DDP:
            self._model = torch.nn.parallel.DistributedDataParallel(
                self._model, device_ids=[self._local_rank], output_device=self._local_rank
            )
        if self._optimizer_type == Optimizer.SGD:
            self._optimizer = torch.optim.SGD(
                self._model.parameters(), lr=1e-5, momentum=0.9, weight_decay=1e-4, nesterov=True
            )
        elif self._optimizer_type == Optimizer.ADAM:
            self._optimizer = torch.optim.Adam(self._model.parameters(), lr=1e-5, betas=(0.9, 0.999), eps=1e-08)
        elif self._optimizer_type == Optimizer.ADAMW:
            self._optimizer = transformers.AdamW(self._model.parameters(), lr=1e-5, betas=(0.9, 0.999), eps=1e-08)
        return self._optimizer is not None

    def _sync_result(self, result):
        """Reduce the step-time list to rank 0 (MAX over ranks)."""
        result = super()._sync_result(result)
        if not result:
            return None
        if self._args.distributed_impl == DistributedImpl.DDP:
            if self._args.distributed_backend == DistributedBackend.NCCL:
                tensor = torch.as_tensor(result).cuda()
            else:
                tensor = torch.as_tensor(result)
            torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MAX)
            result = tensor.tolist()
        return result

    def _postprocess(self):
        if not super()._postprocess():
            return False
        if self._args.distributed_impl == DistributedImpl.DDP:
            torch.distributed.barrier()
            torch.distributed.destroy_process_group()
        if self._gpu_available:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        return True
