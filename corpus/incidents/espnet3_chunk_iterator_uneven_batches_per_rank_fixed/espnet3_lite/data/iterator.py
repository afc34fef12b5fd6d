"""Base per-epoch batch iterator for ESPnet3 (espnet3/components/data/iterator.py, added by
espnet#6517): when torch.distributed is initialized, all ranks all-reduce a one-element has-next
flag with MIN before every batch, so the epoch ends on every rank at the same batch index."""
import torch


class BaseIterator:
    def __init__(self, iterator):
        """Wrap one rank's per-epoch batch iterator."""
        self._iterator = iterator

    def __len__(self):
        """Upper bound in distributed runs: the epoch ends earlier on every rank when the first
        rank runs out of batches."""
        return len(self._iterator)

    def generate(self):
        """Yield this rank's batches."""
        yield from self._iterator

    def __iter__(self):
        """Yield batches, stopping on all ranks once any rank is exhausted."""
        if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
            yield from self.generate()
            return
        # NCCL only reduces CUDA tensors; gloo/mpi take CPU tensors.
        if torch.distributed.get_backend() == "nccl":
            device = torch.device("cuda", torch.cuda.current_device())
        else:
            device = torch.device("cpu")
        it = self.generate()
        while True:
            try:
                batch = next(it)
                has_next = torch.ones(1, device=device)
            except StopIteration:
                batch = None
                has_next = torch.zeros(1, device=device)
            torch.distributed.all_reduce(has_next, op=torch.distributed.ReduceOp.MIN)
            # After the all-reduce, has_next is 0 on all ranks if any rank's
            # iterator is exhausted.
            if has_next.item() == 0:
                return
            yield batch
