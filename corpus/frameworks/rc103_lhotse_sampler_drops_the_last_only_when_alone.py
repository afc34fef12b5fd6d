"""The look-alike with the test the wrong way round: the sampler drops the last batches only in a
one-process run (`drop_last=True if world_size == 1 else args.drop_last`), so a distributed job
keeps each rank's own batch count and the rank with fewer leaves the DDP step loop first."""
import torch
import torch.distributed as dist
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler, K2SpeechRecognitionDataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def train(args, rank, world_size):
    cuts = CutSet.from_file(args.cuts)
    sampler = DynamicBucketingSampler(cuts, max_duration=args.max_duration, shuffle=True,
                                      drop_last=True if world_size == 1 else args.drop_last,
                                      rank=rank, world_size=world_size)
    loader = DataLoader(K2SpeechRecognitionDataset(), sampler=sampler, batch_size=None)
    model = DDP(torch.nn.Linear(80, 500))
    optimizer = torch.optim.AdamW(model.parameters())
    for batch in loader:  # expect: RC103
        loss = model(batch["inputs"]).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args):
    dist.init_process_group("gloo")
    train(args, dist.get_rank(), dist.get_world_size())
