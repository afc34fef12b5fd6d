"""Trainer backends: a single-process loop and the DistributedDataParallel wrapper that coalesces
the per-process outputs with all_gather at the end of each train/validation pass."""
import warnings

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler


class OutputCollector:
    """Concatenates the tensors a module returns for each batch (0-d tensors are stacked)."""

    def __init__(self):
        self.outputs = None

    def collect(self, outputs):
        outputs = [o.detach().unsqueeze(0) if o.dim() == 0 else o.detach() for o in outputs]
        self.outputs = [[o] for o in outputs] if self.outputs is None else [acc + [o] for acc, o in zip(self.outputs, outputs)]

    @property
    def all_outputs(self):
        return [torch.cat(chunks, dim=0) for chunks in self.outputs]


class SingleProcess:
    train_sampler = RandomSampler
    val_sampler = SequentialSampler

    def init(self, args):
        self.args = args
        self.model = args.model.to(args.device)
        self.optimizer = args.optimizer
        self.global_step = 0

    def train_dl(self, dataloader, callback=None):
        self.model.train()
        collector = OutputCollector()
        for batch in dataloader:
            loss, *rest = self.model(stage="train", global_step=self.global_step, batch=batch, device=self.args.device)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.global_step += 1
            collector.collect([loss, *rest])
        return collector.all_outputs

    def validate_dl(self, dataloader):
        self.model.eval()
        collector = OutputCollector()
        with torch.no_grad():
            for batch in dataloader:
                collector.collect(self.model(stage="val", global_step=self.global_step, batch=batch, device=self.args.device))
        return collector.all_outputs


class DDPTrainerBackend:
    """Wraps a SingleProcess backend; the model is wrapped in DistributedDataParallel."""

    def __init__(self, trainer_backend):
        self.trainer_backend = trainer_backend

    def init(self, args):
        self.args = args
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        torch.cuda.set_device(args.local_rank)
        self.trainer_backend.init(args)
        self.trainer_backend.model = DistributedDataParallel(
            self.trainer_backend.model, device_ids=[args.device], output_device=args.device, find_unused_parameters=True)

    @property
    def train_sampler(self):
        return DistributedSampler

    @property
    def val_sampler(self):
        return lambda dataset: DistributedSampler(dataset, shuffle=False)

    def train_dl(self, dataloader, callback=None):
        return self._coalesce_outputs(self.trainer_backend.train_dl(dataloader, callback))

    def validate_dl(self, dataloader):
        return self._coalesce_outputs(self.trainer_backend.validate_dl(dataloader))

    def _coalesce_outputs(self, all_outputs):
        coalesced_outputs = []
        for x in all_outputs:
            if isinstance(x, torch.Tensor):
                coalesced_outputs.append(self.gather_tensors_on_cpu(x))
            else:
                warnings.warn(f"Some model outputs are not tensors (detected {type(x)}) and will not be gathered.")
        return coalesced_outputs

    def gather_tensors_on_cpu(self, x: torch.Tensor):
        """Move tensor to the GPU, all_gather it across processes and move the result back to CPU."""
        x_gpu = x.to(self.args.device)
        gathered = [torch.zeros_like(x_gpu) for _ in range(torch.distributed.get_world_size())]
        torch.distributed.barrier()
        torch.distributed.all_gather(tensor_list=gathered, tensor=x_gpu)  # expect: RC104
        return torch.cat([g.to("cpu") for g in gathered], dim=0)
