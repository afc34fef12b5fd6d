"""Timeslide background for validation (reconstruction of aframe projects/train/train/metrics.py)."""
import itertools

import torch


def x_per_y(x, y):
    return int((x - 1) // y) + 1


class TimeSlide:
    """Shift one interferometer against the other and step a kernel through the result."""

    def __init__(self, timeseries, shift_size, kernel_size, stride_size, batch_size, start=0, stop=-1):
        self.timeseries = timeseries
        self.shift_size = shift_size
        self.kernel_size = kernel_size
        self.stride_size = stride_size
        self.batch_size = batch_size
        self.start = start
        self.stop = stop if stop != -1 else timeseries.size(-1)

    @property
    def max_shift(self):
        return abs(self.shift_size) * (len(self.timeseries) - 1)

    @property
    def num_steps(self):
        size = self.stop - self.start - self.max_shift - self.kernel_size
        return size // self.stride_size + 1

    def new_bounds(self, start=None, stop=None):
        return TimeSlide(self.timeseries, self.shift_size, self.kernel_size, self.stride_size,
                         self.batch_size, self.start if start is None else start, stop or self.stop)

    def __len__(self):
        return x_per_y(self.num_steps, self.batch_size)

    def __iter__(self):
        step_size = self.batch_size * self.stride_size + self.kernel_size
        for i in range(len(self)):
            start = self.start + i * self.batch_size * self.stride_size
            X = [self.timeseries[j, start + j * abs(self.shift_size): start + j * abs(self.shift_size) + step_size]
                 for j in range(len(self.timeseries))]
            minlen = min(len(x) for x in X)
            yield torch.stack([x[:minlen] for x in X])


def get_timeslides(timeseries, livetime, sample_rate, sample_length, stride, batch_size):
    """Make timeslides until `livetime` seconds of background, then split them between devices
    so that each device does "roughly an equal number of steps"."""
    kernel_size = int(sample_length * sample_rate)
    stride_size = int(stride * sample_rate)
    shifts = itertools.chain.from_iterable(zip(itertools.count(1, 1), itertools.count(-1, -1)))
    timeslides = []
    for shift in shifts:
        if livetime <= 0:
            break
        for ts in timeseries:
            timeslide = TimeSlide(ts, int(shift * sample_rate), kernel_size, stride_size, batch_size)
            livetime -= ts.size(-1) / sample_rate - sample_length - timeslide.max_shift / sample_rate
            timeslides.append(timeslide)
            if livetime <= 0:
                break

    world_size = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    if world_size == 1:
        return timeslides, sum(len(ts) for ts in timeslides)

    steps_per_dev = x_per_y(sum(t.num_steps for t in timeslides), world_size)
    timeslides_per_dev = [[]]
    it = iter(timeslides)
    timeslide = next(it)
    while True:
        current_steps = sum(t.num_steps for t in timeslides_per_dev[-1])
        if current_steps + timeslide.num_steps > steps_per_dev:
            num_steps = steps_per_dev - current_steps + 1
            stop = timeslide.start + timeslide.max_shift + kernel_size + num_steps * stride_size
            timeslides_per_dev[-1].append(timeslide.new_bounds(stop=stop))
            timeslides_per_dev.append([])
            timeslide = timeslide.new_bounds(start=stop - stride_size - kernel_size)
        elif current_steps + timeslide.num_steps == steps_per_dev:
            break
        else:
            timeslides_per_dev[-1].append(timeslide)
            try:
                timeslide = next(it)
            except StopIteration:
                break

    # the timeslides in total don't combine to the same number of batches on every
    # device, which hangs distributed validation: every device validates on the
    # smallest device's number of batches
    lengths = [sum(len(ts) for ts in dev) for dev in timeslides_per_dev]
    minimum = min(lengths)
    return timeslides_per_dev[torch.distributed.get_rank()], minimum
