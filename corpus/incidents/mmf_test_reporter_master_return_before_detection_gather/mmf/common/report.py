"""Report: the model output merged with the batch it was computed from (mmf/common/report.py, reduced)."""
import collections


class Report(collections.OrderedDict):
    def __init__(self, batch=None, model_output=None):
        super().__init__()
        for source in (batch or {}, model_output or {}):
            for key, value in source.items():
                self[key] = value

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e

    def __setattr__(self, key, value):
        self[key] = value

    def detach(self):
        for key, value in self.items():
            if hasattr(value, "detach"):
                self[key] = value.detach()
        return self
