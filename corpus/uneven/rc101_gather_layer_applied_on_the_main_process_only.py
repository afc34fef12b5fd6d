"""A SimCLR-style GatherLayer (a torch.autograd.Function whose forward all-gathers) used by the
contrastive loss: the training step applies it on every rank, but the logging of a nearest-
neighbour accuracy applies it again only on the main process, which then waits in the all_gather
for ranks that never enter it."""
import torch
import torch.distributed as dist
import torch.nn.functional as F


class GatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        all_grads = torch.stack(grads)
        dist.all_reduce(all_grads)
        return all_grads[dist.get_rank()]


def contrastive_loss(z1, z2, temperature=0.1):
    z1 = torch.cat(GatherLayer.apply(F.normalize(z1, dim=1)), 0)
    z2 = torch.cat(GatherLayer.apply(F.normalize(z2, dim=1)), 0)
    logits = z1 @ z2.t() / temperature
    return F.cross_entropy(logits, torch.arange(z1.shape[0], device=z1.device))


def train(model, loader, optimizer, log_every=100):
    rank = dist.get_rank()
    for step, (x1, x2) in enumerate(loader):
        z1, z2 = model(x1), model(x2)
        loss = contrastive_loss(z1, z2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if rank == 0 and step % log_every == 0:
            everyone = torch.cat(GatherLayer.apply(z1.detach()), 0)  # expect: RC101
            print(step, loss.item(), everyone.norm(dim=1).mean().item())
