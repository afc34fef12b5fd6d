"""vall-e's merged fix as written: the sampler drops each rank's last, partial batches whenever
the job has other processes (`drop_last=True if world_size > 1 else args.drop_last`); a
one-process run keeps the command line's choice, which leaves nobody waiting."""
import torch
import torch.distributed as dist
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler, K2SpeechRecognitionDataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def train(args, rank, world_size):
    cuts = CutSet.from_file(args.cuts)
    sampler = DynamicBucketingSampler(cuts, max_duration=args.max_duration, shuffle=True,
                                      drop_last=True if world_size > 1 else args.drop_last,
                                      rank=rank, world_size=world_size)
    loader = DataLoader(K2SpeechRecognitionDataset(), sampler=sampler, batch_size=None)
    model = DDP(torch.nn.Linear(80, 500))
    optimizer = torch.optim.AdamW(model.parameters())
    for batch in loader:
        loss = model(batch["inputs"]).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args):
    dist.init_process_group("gloo")
    train(args, dist.get_rank(), dist.get_world_size())
