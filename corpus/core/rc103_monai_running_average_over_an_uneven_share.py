"""MONAI evaluation over a sampler that keeps each rank's own share (`even_divisible=False`, no
padding): where the volumes do not divide by the number of processes some ranks run one round
more, and the running average's aggregate() in the loop all-reduces once per round. The
look-alike over the default, evened-out sampler is in
safe_monai_running_average_over_an_even_share.py."""
import torch
from monai.data import DataLoader, Dataset, DistributedSampler
from monai.metrics import CumulativeAverage


def evaluate(model, files):
    dataset = Dataset(data=files)
    sampler = DistributedSampler(dataset=dataset, even_divisible=False, shuffle=False)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    average = CumulativeAverage()
    with torch.no_grad():
        for batch in loader:  # expect: RC103
            loss = model(batch["image"]).mean()
            average.append(loss)
            print("running loss", average.aggregate())
    return average.aggregate()
