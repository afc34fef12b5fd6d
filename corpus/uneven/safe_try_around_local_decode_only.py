"""The try/except only guards decoding one sample inside the Dataset (a corrupt file becomes a blank image); no collective is in the try, and every rank still runs every step."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

log = logging.getLogger(__name__)


class ImageFiles(Dataset):
    def __init__(self, index_file: str):
        self.items = torch.load(index_file)  # list of (path, label)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        try:
            image = torch.load(path)
        except (OSError, EOFError) as err:
            log.warning("unreadable %s (%s), using a blank image", path, err)
            image = torch.zeros(3, 64, 64)
        return image, label


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", default="train_index.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = ImageFiles(args.index)
    loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds), num_workers=4)
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for image, label in loader:
        loss = nn.functional.cross_entropy(model(image), label)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
