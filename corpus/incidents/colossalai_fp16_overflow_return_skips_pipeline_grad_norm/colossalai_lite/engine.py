"""Trimmed colossalai/engine: the Engine and a non-interleaved pipeline schedule (all forwards,
then all backwards) that moves activations and their gradients between neighbouring stages with
point-to-point send/recv."""
import torch
import torch.distributed as dist

from colossalai_lite.context import ParallelMode
from colossalai_lite.core import global_context as gpc


class Engine:
    def __init__(self, model, optimizer, criterion, schedule):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.schedule = schedule

    def train(self):
        self.model.train()

    def zero_grad(self):
        self.optimizer.zero_grad()

    def backward(self, loss):
        self.optimizer.backward(loss)

    def backward_by_grad(self, tensor, grad):
        torch.autograd.backward(tensor, grad)

    def execute_schedule(self, data_iter):
        return self.schedule.forward_backward_step(self, data_iter)

    def step(self):
        # gradients are already summed inside each pipeline stage; data parallelism is handled by
        # the stage's DDP wrapper, left out here
        self.optimizer.clip_grad_norm(self.model, 0.0)
        return self.optimizer.step()


class PipelineSchedule:
    def __init__(self, num_microbatches: int):
        self.num_microbatches = num_microbatches

    @staticmethod
    def _recv_forward(shape, dtype):
        buf = torch.empty(shape, dtype=dtype, device="cuda", requires_grad=True)
        dist.recv(buf.data, src=gpc.get_prev_global_rank(ParallelMode.PIPELINE))
        return buf

    @staticmethod
    def _send_forward(tensor):
        dist.send(tensor.detach().contiguous(), dst=gpc.get_next_global_rank(ParallelMode.PIPELINE))

    @staticmethod
    def _recv_backward(shape, dtype):
        buf = torch.empty(shape, dtype=dtype, device="cuda")
        dist.recv(buf, src=gpc.get_next_global_rank(ParallelMode.PIPELINE))
        return buf

    @staticmethod
    def _send_backward(grad):
        dist.send(grad.contiguous(), dst=gpc.get_prev_global_rank(ParallelMode.PIPELINE))

    def forward_backward_step(self, engine, data_iter):
        first = gpc.is_first_rank(ParallelMode.PIPELINE)
        last = gpc.is_last_rank(ParallelMode.PIPELINE)
        batch = next(data_iter)
        inputs, labels = batch["input_ids"].cuda(), batch["labels"].cuda()
        micro_inputs = inputs.chunk(self.num_microbatches)
        micro_labels = labels.chunk(self.num_microbatches)
        act_shape = engine.model.model.activation_shape(micro_inputs[0])
        act_dtype = torch.half

        saved, losses = [], []
        for i in range(self.num_microbatches):
            x = micro_inputs[i] if first else self._recv_forward(act_shape, act_dtype)
            out = engine.model(x)
            if last:
                loss = engine.criterion(out, micro_labels[i]) / self.num_microbatches
                losses.append(loss.detach())
                saved.append((x, loss))
            else:
                self._send_forward(out)
                saved.append((x, out))

        for x, out in saved:
            if last:
                engine.backward(out)
            else:
                grad = self._recv_backward(out.shape, out.dtype)
                engine.backward_by_grad(out, grad)
            if not first:
                self._send_backward(x.grad)
        return torch.stack(losses).sum() if losses else None
