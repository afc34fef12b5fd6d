"""Process-wide registry of the configured data backends and of which ones ran dry this epoch."""


class StateTracker:
    _data_backends = {}
    _exhausted_backends = {}
    _epoch = 1

    @classmethod
    def register_data_backend(cls, backend):
        cls._data_backends[backend["id"]] = backend

    @classmethod
    def get_data_backends(cls):
        return cls._data_backends

    @classmethod
    def get_data_backend(cls, backend_id):
        return cls._data_backends[backend_id]

    @classmethod
    def backend_exhausted(cls, backend_id):
        cls._exhausted_backends[backend_id] = True

    @classmethod
    def backend_status(cls, backend_id):
        return cls._exhausted_backends.get(backend_id, False)

    @classmethod
    def clear_exhausted_buckets(cls):
        cls._exhausted_backends = {}

    @classmethod
    def set_epoch(cls, epoch):
        cls._epoch = epoch

    @classmethod
    def get_epoch(cls):
        return cls._epoch
