"""Trimmed bigdl/orca/learn/pytorch/pytorch_ray_estimator.py: the Spark DataFrame is turned into
XShards, its partitions are handed out to the Ray actors, and each actor builds its DataLoader from
the partitions it was given (no DistributedSampler for XShards input)."""
import numpy as np
import ray
import torch
from torch.utils.data import DataLoader, Dataset

from .torch_runner import TorchRunner


def partition_refs_to_creator(partition_refs):
    def data_creator(config, batch_size):
        class NDArrayDataset(Dataset):
            def __init__(self, x, y):
                self.x, self.y = x, y

            def __len__(self):
                return len(self.y)

            def __getitem__(self, i):
                return self.x[i], self.y[i]

        partitions = ray.get(partition_refs)
        x = np.concatenate([p["x"] for p in partitions]).astype("float32")
        y = np.concatenate([p["y"] for p in partitions]).astype("float32")
        print("Data size on worker: ", len(y))
        params = {"batch_size": batch_size, "shuffle": True}
        for arg in ("shuffle", "num_workers", "drop_last"):
            if arg in config:
                params[arg] = config[arg]
        return DataLoader(NDArrayDataset(torch.from_numpy(x), torch.from_numpy(y)), **params)

    return data_creator


def dataframe_to_partitions(df, feature_cols, label_cols):
    def to_shard(rows):
        rows = list(rows)
        if not rows:
            return []
        x = np.array([[r[c] for c in feature_cols] for r in rows])
        y = np.array([[r[c] for c in label_cols] for r in rows])
        return [{"x": x, "y": y}]

    shards = df.rdd.mapPartitions(to_shard).collect()
    return [ray.put(s) for s in shards]


@ray.remote
class PyTorchRayWorker(TorchRunner):
    pass


class PyTorchRayEstimator:
    def __init__(self, model_creator, optimizer_creator, loss_creator=None, config=None,
                 workers_per_node=1, num_nodes=1, sync_stats=True):
        self.num_workers = workers_per_node * num_nodes
        self.remote_workers = [
            PyTorchRayWorker.remote(model_creator, optimizer_creator, loss_creator, config, sync_stats=sync_stats)
            for _ in range(self.num_workers)
        ]
        url = f"tcp://{ray.util.get_node_ip_address()}:29500"
        ray.get([w.setup_torch_distribute.remote(url, i, self.num_workers)
                 for i, w in enumerate(self.remote_workers)])

    def fit(self, data, epochs=1, batch_size=32, feature_cols=None, label_cols=None, info=None):
        partition_refs = dataframe_to_partitions(data, feature_cols, label_cols)
        # round-robin: worker i gets partitions i, i + n, i + 2n, ...
        assigned = [partition_refs[i::self.num_workers] for i in range(self.num_workers)]
        futures = []
        for worker, refs in zip(self.remote_workers, assigned):
            data_creator = partition_refs_to_creator(refs)
            # should not wrap a DistributedSampler around a loader built from XShards
            futures.append(worker.train_epochs.remote(data_creator, epochs, batch_size, False, info, False))
        # one list of per-epoch stats per worker
        return ray.get(futures)
