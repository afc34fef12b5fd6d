"""Collaborative-filtering (DLRM-style) training with TorchRec on one 8-GPU node: sparse user/item
features go through a sharded EmbeddingBagCollection (DistributedModelParallel), and the epoch is
driven by TrainPipelineSparseDist, whose progress() runs the input-dist all-to-all, forward,
backward and optimizer step for one batch.

Thread: https://github.com/meta-pytorch/torchrec/issues/189 ("Multi-GPUs: Partial Ranks Hang for a
long time after other ranks finished")
Project: meta-pytorch/torchrec
What hung: each rank reads its own subset of the rating part files, which hold different numbers of
rows, so the ranks have different numbers of batches. In the last epoch five ranks finished after
35 batches and exited while the others (one at 16, one at 26 batches) waited in the embedding
all-to-all until the watchdog fired (WorkNCCL(OpType=ALLTOALL_BASE) ran for 1803657 ms). The epoch
loop ends on each rank's own StopIteration.
Fix: documented remedy (the thread shows no code): wrap the datapipe in torchdata's
FullSyncIterDataPipe (`.fullsync()`), which stops every rank when the first one runs out, as
TorchRec's own data paths do (torchrec#4158 describes this failure for loaders "not wrapped in
FullSyncIterDataPipe").
Expected rankcheck finding: RC103 on the per-rank `break` that ends the epoch loop.
Inferred: the file layout, the parquet schema, the feature names, the model sizes and the dense
optimizer; only the tqdm log lines and the ALLTOALL timeout come from the thread.
"""
import argparse
import glob
import itertools
import os

import pandas as pd
import torch
import torch.distributed as dist
from torchdata.datapipes.iter import IterableWrapper
from torchrec import EmbeddingBagCollection
from torchrec.datasets.utils import Batch
from torchrec.distributed import DistributedModelParallel
from torchrec.distributed.train_pipeline import TrainPipelineSparseDist
from torchrec.models.dlrm import DLRM, DLRMTrain
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.optim.keyed import KeyedOptimizerWrapper
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor
from tqdm import tqdm

SPARSE = ["user_id", "item_id", "item_category"]
DENSE = ["user_age", "item_price", "hour_of_day", "days_since_release"]


def rows_to_batch(rows):
    df = pd.DataFrame(rows)
    dense = torch.tensor(df[DENSE].values, dtype=torch.float32)
    values = torch.tensor(df[SPARSE].values.T.reshape(-1), dtype=torch.long)
    kjt = KeyedJaggedTensor.from_lengths_sync(keys=SPARSE, values=values,
                                              lengths=torch.ones(len(SPARSE) * len(df), dtype=torch.int32))
    return Batch(dense_features=dense, sparse_features=kjt, labels=torch.tensor(df["clicked"].values, dtype=torch.float32))


def read_rows(path):
    for row in pd.read_parquet(path).to_dict("records"):
        yield row


def make_dataloader(files, batch_size):
    datapipe = IterableWrapper(files).flatmap(read_rows).batch(batch_size, drop_last=True).map(rows_to_batch)
    return torch.utils.data.DataLoader(datapipe, batch_size=None, num_workers=0)


def train_epoch(pipeline, dataloader, epoch, rank, world_size):
    pipeline._model.train()
    iterator = iter(dataloader)
    pbar = tqdm(desc=f"Epoch {epoch}, Rank {rank}, world_size {world_size}", unit="batch")
    for _ in itertools.count():
        try:
            pipeline.progress(iterator)
            pbar.update(1)
        except StopIteration:
            break  # expect: RC103
    pbar.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", default="/data/ratings/train")
    p.add_argument("--batch_size", type=int, default=8192)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--num_embeddings", type=int, default=2_000_000)
    args = p.parse_args()

    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device(f"cuda:{int(os.environ['LOCAL_RANK'])}")
    torch.cuda.set_device(device)
    dist.init_process_group(backend="nccl")

    files = sorted(glob.glob(f"{args.data_dir}/part-*.parquet"))[rank::world_size]
    dataloader = make_dataloader(files, args.batch_size)

    tables = [EmbeddingBagConfig(name=f"t_{f}", embedding_dim=64, num_embeddings=args.num_embeddings,
                                 feature_names=[f]) for f in SPARSE]
    dlrm = DLRM(embedding_bag_collection=EmbeddingBagCollection(tables=tables, device=torch.device("meta")),
                dense_in_features=len(DENSE), dense_arch_layer_sizes=[256, 64], over_arch_layer_sizes=[256, 128, 1],
                dense_device=device)
    model = DistributedModelParallel(module=DLRMTrain(dlrm), device=device)
    optimizer = KeyedOptimizerWrapper(dict(model.named_parameters()), lambda params: torch.optim.Adagrad(params, lr=0.01))
    pipeline = TrainPipelineSparseDist(model, optimizer, device)

    for epoch in range(args.epochs):
        train_epoch(pipeline, dataloader, epoch, rank, world_size)

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
