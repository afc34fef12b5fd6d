"""Safe twin of bigdl_orca_ray_estimator_uneven_partitions_ddp_loop: TrainingOperator.train_epoch
runs its loop inside `with self.model.join():` when the model is DDP-wrapped
(intel/ipex-llm#3626, merged), so workers whose partitions give fewer batches keep answering the
other workers' gradient all-reduces until every loop has ended.
"""
import argparse

import torch
import torch.nn as nn

from bigdl_lite.orca import get_spark_session, init_orca_context, stop_orca_context
from bigdl_lite.orca.learn.pytorch import Estimator


class NCF(nn.Module):
    def __init__(self, num_users, num_items, dim=16):
        super().__init__()
        self.user = nn.Embedding(num_users, dim)
        self.item = nn.Embedding(num_items, dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        u = self.user(x[:, 0].long())
        i = self.item(x[:, 1].long())
        return torch.sigmoid(self.mlp(torch.cat([u, i], dim=-1)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ratings", required=True, help="parquet with user, item, rating")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--min_rating_count", type=int, default=5)
    args = parser.parse_args()

    init_orca_context(cluster_mode="local", cores=8)
    spark = get_spark_session()
    df = spark.read.parquet(args.ratings)
    # keep only users with enough ratings: the filter leaves the partitions with different sizes
    counts = df.groupBy("user").count().filter(f"count >= {args.min_rating_count}")
    df = df.join(counts.select("user"), on="user").withColumn("label", (df.rating >= 4).cast("float"))
    num_users = df.agg({"user": "max"}).collect()[0][0] + 1
    num_items = df.agg({"item": "max"}).collect()[0][0] + 1

    est = Estimator.from_torch(
        model=lambda config: NCF(num_users, num_items),
        optimizer=lambda model, config: torch.optim.Adam(model.parameters(), lr=config.get("lr", 1e-3)),
        loss=lambda config: nn.BCELoss(),
        config={"lr": 1e-3},
        workers_per_node=args.workers,
        backend="ray",
    )
    stats = est.fit(df, epochs=args.epochs, batch_size=args.batch_size,
                    feature_cols=["user", "item"], label_cols=["label"])
    print(stats[0][-1])
    stop_orca_context()


if __name__ == "__main__":
    main()
