"""The look-alike of rc103_monai_running_average_over_an_uneven_share.py over MONAI's default
sampler (`even_divisible=True`): every rank's share is padded to the same length, so the
in-loop aggregate() is reached the same number of times on every rank."""
import torch
from monai.data import DataLoader, Dataset, DistributedSampler
from monai.metrics import CumulativeAverage


def evaluate(model, files):
    dataset = Dataset(data=files)
    sampler = DistributedSampler(dataset=dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    average = CumulativeAverage()
    with torch.no_grad():
        for batch in loader:
            loss = model(batch["image"]).mean()
            average.append(loss)
            print("running loss", average.aggregate())
    return average.aggregate()
