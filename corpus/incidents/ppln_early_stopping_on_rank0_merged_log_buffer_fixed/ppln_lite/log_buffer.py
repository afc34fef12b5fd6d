"""Accumulates per-iteration scalar values and their sample counts; `average()` turns the history
into sample-weighted means in `output`."""
from collections import OrderedDict, defaultdict

import numpy as np


class LogBuffer:
    def __init__(self):
        self.value_history = defaultdict(list)
        self.n_history = defaultdict(list)
        self.output = OrderedDict()
        self.ready = False

    def clear(self):
        self.value_history.clear()
        self.n_history.clear()
        self.clear_output()

    def clear_output(self):
        self.output.clear()
        self.ready = False

    def update(self, values, count=1):
        for key, value in values.items():
            self.value_history[key].append(value)
            self.n_history[key].append(count)

    def average(self, n=0):
        for key in self.value_history:
            values = np.array(self.value_history[key][-n:])
            nums = np.array(self.n_history[key][-n:])
            self.output[key] = float(np.sum(values * nums) / np.sum(nums))
        self.ready = True
