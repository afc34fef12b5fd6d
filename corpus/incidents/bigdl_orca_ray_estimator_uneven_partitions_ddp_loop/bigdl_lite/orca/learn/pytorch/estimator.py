"""Trimmed bigdl/orca/learn/pytorch/estimator.py."""
from .pytorch_ray_estimator import PyTorchRayEstimator


class Estimator:
    @staticmethod
    def from_torch(*, model, optimizer, loss=None, config=None, workers_per_node=1, backend="ray",
                   sync_stats=True):
        assert backend == "ray", "this trimmed copy only has the ray backend"
        return PyTorchRayEstimator(model_creator=model, optimizer_creator=optimizer,
                                   loss_creator=loss, config=config,
                                   workers_per_node=workers_per_node, sync_stats=sync_stats)
