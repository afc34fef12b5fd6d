"""The script sets the spawn start method before anything runs: the workers of the loader built
after `model.cuda()` are spawned, not forked."""
import torch.multiprocessing as mp
from torch.utils.data import DataLoader


def main(model, dataset):
    model.cuda()
    loader = DataLoader(dataset, num_workers=4)
    return loader


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    main(None, [])
