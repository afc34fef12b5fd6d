"""Look-alike of rc104_self_dict_keys_from_data: a trainer checks that the gradient norms agree by
writing its own norm into its rank's slot of a buffer every rank allocated with one entry per
rank, then all-reducing the buffer (fairseq's `_check_grad_norms`). The slot is picked by the
rank, but the buffer has the same length everywhere: no RC104.
"""
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model):
        self.model = model
        self.dp_rank = dist.get_rank()
        self._grad_norm_buf = torch.cuda.DoubleTensor(dist.get_world_size())

    def check_grad_norms(self, grad_norm):
        self._grad_norm_buf.zero_()
        self._grad_norm_buf[self.dp_rank] = grad_norm
        dist.all_reduce(self._grad_norm_buf)
        return torch.isfinite(self._grad_norm_buf).all()
