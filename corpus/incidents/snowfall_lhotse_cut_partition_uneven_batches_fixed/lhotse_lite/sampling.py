import random
import warnings
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple, Union

import torch.distributed as dist
from torch.utils.data import Sampler

from lhotse import CutSet
from lhotse.utils import Seconds, exactly_one_not_null, is_none_or_gt


class DataSource:
    def __init__(self, items):
        self._items = items
        self._permutation = list(range(len(self._items)))

    def shuffle(self, seed):
        r = random.Random(seed)
        self._permutation = list(range(len(self._items)))
        r.shuffle(self._permutation)

    def __getitem__(self, idx):
        return self._items[self._permutation[idx]]

    def __len__(self):
        return len(self._items)


class CutSampler(Sampler[List[str]]):
    """
    CutSampler is responsible for collecting batches of cuts, given specified criteria.
    It implements correct handling of distributed sampling in DataLoader,
    so that the cuts are not duplicated across workers.

    CutSampler works similarly to PyTorch's DistributedSampler - when :attr:`shuffle=True`,
    you should call ``sampler.set_epoch(epoch)`` at each new epoch to have a different
    ordering of returned elements. However, its actual behaviour is different than that of
    DistributedSampler -- instead of partitioning the underlying cuts into equally sized chunks,
    it will return every N-th batch and skip the other batches (where ``N == world_size``).
    This ensures that we can return an equal number of batches in all distributed workers
    in spite of using a dynamic batch size, at the cost of skipping at most ``world_size - 1`` batches.
    """

    def __init__(
            self,
            cut_ids: Iterable[str],
            shuffle: bool = False,
            world_size: Optional[int] = None,
            rank: Optional[int] = None,
            seed: int = 0,
    ) -> None:
        data_source = DataSource(list(cut_ids))
        super().__init__(data_source)
        self.data_source = data_source
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.cut_idx = 0

        self._maybe_init_distributed(world_size=world_size, rank=rank)
        self.num_batches = None

    def _maybe_init_distributed(self, world_size: Optional[int], rank: Optional[int]):
        if world_size is not None:
            assert world_size >= 1
        if rank is not None:
            assert rank >= 0
        if not dist.is_available() or not dist.is_initialized():
            self.world_size = 1 if world_size is None else world_size
            self.rank = 0 if rank is None else rank
            return
        self.world_size = dist.get_world_size() if world_size is None else world_size
        self.rank = dist.get_rank() if rank is None else rank
        assert self.rank < self.world_size

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.num_batches = None

    def __iter__(self) -> 'CutSampler':
        """
        Prepare the dataset for iterating over a new epoch. Will shuffle the data if requested.
        """
        if self.shuffle:
            self.data_source.shuffle(self.seed + self.epoch)
        self.cut_idx = 0
        return self

    def __len__(self) -> int:
        if self.num_batches is None:
            self.num_batches = sum(1 for _ in self)
        return self.num_batches

    def _next_batch(self) -> List[str]:
        raise NotImplementedError("Sub-classes of CutSampler have to implement self._next_batch()")

    def __next__(self) -> List[str]:
        # We use the following trick to ensure equal number of batches for each distributed
        # worker:
        # Every time a next batch is required, we will sample self.world_size batches first,
        # and then return the one at position self.rank.
        # This way, if any of the batches raises StopIteration, we'll know to stop early
        # when a given batch was available for one of the nodes, but not for the others.
        batches = []
        for _ in range(self.world_size):
            batches.append(self._next_batch())
        return batches[self.rank]


@dataclass
class TimeConstraint:
    """
    Represents a time-based constraint for sampler classes: maximum total batch duration
    (in seconds) or number of frames. The options are mutually exclusive.
    """
    max_duration: Optional[Seconds] = None
    max_frames: Optional[int] = None
    current: Union[int, Seconds] = 0

    def __post_init__(self) -> None:
        assert exactly_one_not_null(*self._constraints) or all(x is None for x in self._constraints)
        for c in self._constraints:
            assert is_none_or_gt(c, 0)

    @property
    def _constraints(self) -> Tuple:
        return self.max_duration, self.max_frames

    def is_active(self) -> bool:
        return any(x is not None for x in self._constraints)

    def add(self, cut) -> None:
        if self.max_frames is not None:
            self.current += cut.num_frames
        if self.max_duration is not None:
            self.current += cut.duration

    def exceeded(self) -> bool:
        if self.max_frames is not None:
            return self.current > self.max_frames
        if self.max_duration is not None:
            return self.current > self.max_duration
        return False

    def reset(self) -> None:
        self.current = 0


class SingleCutSampler(CutSampler):
    """
    Samples cuts from a CutSet to satisfy the input constraints.
    It behaves like an iterable that yields lists of strings (cut IDs).

    When one of :attr:`max_frames` or :attr:`max_duration` is specified, the batch size is dynamic.
    """

    def __init__(
            self,
            cuts: CutSet,
            max_frames: int = None,
            max_duration: Seconds = None,
            max_cuts: Optional[int] = None,
            **kwargs
    ):
        super().__init__(cuts.ids, **kwargs)
        self.cuts = cuts
        self.time_constraint = TimeConstraint(max_duration=max_duration, max_frames=max_frames)
        self.max_cuts = max_cuts
        assert is_none_or_gt(self.max_cuts, 0)

    def _next_batch(self) -> List[str]:
        # Keep iterating the underlying CutSet as long as we hit or exceed the constraints
        # provided by user (the max number of frames or max number of cuts).
        self.time_constraint.reset()
        cut_ids = []
        while True:
            # Check that we have not reached the end of the dataset.
            if self.cut_idx < len(self.data_source):
                # We didn't - grab the next cut
                next_cut_id = self.data_source[self.cut_idx]
            else:
                if cut_ids:
                    # We did and we have a partial batch - return it.
                    return cut_ids
                else:
                    # We did and there is nothing more to return - signal the iteration code to stop.
                    raise StopIteration()
            next_cut = self.cuts[next_cut_id]
            self.time_constraint.add(next_cut)
            next_num_cuts = len(cut_ids) + 1
            # Did we exceed the max_frames and max_cuts constraints?
            if not self.time_constraint.exceeded() and (self.max_cuts is None or next_num_cuts <= self.max_cuts):
                # No - add the next cut to the batch, and keep trying.
                cut_ids.append(next_cut.id)
                self.cut_idx += 1
            else:
                # Yes. Do we have at least one cut in the batch?
                if cut_ids:
                    break
                else:
                    warnings.warn("The first cut drawn in batch collection violates the max_frames or max_cuts "
                                  "constraints - we'll return it anyway. Consider increasing max_frames/max_cuts.")
                    cut_ids.append(next_cut.id)
                    self.cut_idx += 1
        return cut_ids

