"""fairseq-shaped k-means initialisation for product quantisation: each rank samples the initial
centroids as random columns of the weight (`W[:, indices]` with `torch.randint(...).long()`), and
rank 0's are broadcast so that every rank starts from the same ones. The random values differ per
rank, but an integer index array picks as many columns as it has items: the broadcast tensor has
one shape everywhere. (The look-alike keeps the columns a per-rank boolean mask selects.)"""
import torch
import torch.distributed as dist


class EM:
    def __init__(self, weight, n_centroids: int = 256) -> None:
        self.weight = weight
        self.n_centroids = n_centroids

    def initialize_centroids(self):
        in_features, out_features = self.weight.size()
        indices = torch.randint(low=0, high=out_features, size=(self.n_centroids,)).long()
        centroids = self.weight[:, indices].t()
        dist.broadcast(centroids, 0)
        return centroids


def main(weight):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    return EM(weight).initialize_centroids()
