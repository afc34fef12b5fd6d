"""The vall-e fix: the DynamicBucketingSampler drops each rank's last, partial batches
(`drop_last=True`), so every rank gets the same number of batches and steps in lock-step."""
import torch
import torch.distributed as dist
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler, K2SpeechRecognitionDataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def main(cuts_path="data/cuts_train.jsonl.gz"):
    dist.init_process_group("nccl")
    cuts = CutSet.from_file(cuts_path)
    sampler = DynamicBucketingSampler(cuts, max_duration=200.0, shuffle=True, drop_last=True,
                                      rank=dist.get_rank(), world_size=dist.get_world_size())
    loader = DataLoader(K2SpeechRecognitionDataset(), sampler=sampler, batch_size=None, num_workers=2)
    model = DDP(torch.nn.Linear(80, 500).cuda())
    optimizer = torch.optim.AdamW(model.parameters())
    for batch in loader:
        loss = model(batch["inputs"].cuda()).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
