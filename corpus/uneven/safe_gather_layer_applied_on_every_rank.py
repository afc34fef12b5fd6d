"""The fixed logging: every rank applies the GatherLayer (its forward all-gathers), and only the
main process prints what it gathered."""
import torch
import torch.distributed as dist


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


def train(model, loader, optimizer, log_every=100):
    rank = dist.get_rank()
    for step, x in enumerate(loader):
        z = model(x)
        loss = z.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            everyone = torch.cat(GatherLayer.apply(z.detach()), 0)
            if rank == 0:
                print(step, loss.item(), everyone.norm(dim=1).mean().item())
