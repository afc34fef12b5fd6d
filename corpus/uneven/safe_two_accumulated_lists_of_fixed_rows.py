"""The same two accumulators holding one fixed-size row per batch (the batch's summed embedding),
with as many batches on every rank (a DistributedSampler loader): both gathers match."""
import torch
import torch.distributed as dist


class MeanEmbedding:
    def __init__(self, dim: int):
        self.dim = dim
        self._queries = []
        self._docs = []

    def update(self, batch):
        self._queries.append(torch.zeros(1, self.dim) + batch["query_emb"].sum(dim=0))
        self._docs.append(torch.zeros(1, self.dim) + batch["doc_emb"].sum(dim=0))

    def compute(self):
        queries = torch.cat(self._queries)
        docs = torch.cat(self._docs)
        all_queries = [torch.empty_like(queries) for _ in range(dist.get_world_size())]
        all_docs = [torch.empty_like(docs) for _ in range(dist.get_world_size())]
        dist.all_gather(all_queries, queries)
        dist.all_gather(all_docs, docs)
        return torch.cat(all_queries).mean(0), torch.cat(all_docs).mean(0)
