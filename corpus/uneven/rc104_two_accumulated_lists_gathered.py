"""A retrieval metric keeps the query and document embeddings of the validation samples it kept
(a per-sample validity mask) in two lists filled by `update` and all-gathers both in `compute`:
each rank's tensors have as many rows as it kept, so both gathers mismatch."""
import torch
import torch.distributed as dist


class RetrievalRecall:
    def __init__(self):
        self._queries = []
        self._docs = []

    def update(self, batch):
        keep = batch["is_valid"].bool()
        self._queries.append(batch["query_emb"][keep])
        self._docs.append(batch["doc_emb"][keep])

    def compute(self, k: int = 10):
        queries = torch.cat(self._queries)
        docs = torch.cat(self._docs)
        all_queries = [torch.empty_like(queries) for _ in range(dist.get_world_size())]
        all_docs = [torch.empty_like(docs) for _ in range(dist.get_world_size())]
        dist.all_gather(all_queries, queries)  # expect: RC104
        dist.all_gather(all_docs, docs)  # expect: RC104
        q, d = torch.cat(all_queries), torch.cat(all_docs)
        ranks = (q @ d.T).argsort(dim=-1, descending=True)
        return (ranks[:, :k] == torch.arange(len(q))[:, None]).any(-1).float().mean()
