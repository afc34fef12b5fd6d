"""The look-alike of rc102_patience_break_under_a_uniform_test_on_rank_zero, as mace fixed it: rank
0 keeps the patience counter and sets a flag instead of breaking; after the end-of-epoch barrier
every rank receives the flag from rank 0 and they leave the loop together.
"""
import torch
import torch.distributed as dist


def evaluate(model, loader):
    total = torch.zeros(1)
    for batch in loader:
        total += model(batch).sum().detach()
    dist.all_reduce(total)
    return total.item()


def train(model, optimizer, train_loader, valid_loader, max_epochs, patience, rank):
    lowest_loss = float("inf")
    patience_counter = 0
    for epoch in range(max_epochs):
        for batch in train_loader:
            optimizer.zero_grad()
            model(batch).mean().backward()
            optimizer.step()
        valid_loss = evaluate(model, valid_loader)
        exit_now = torch.zeros(1)
        if rank == 0:
            if valid_loss >= lowest_loss:
                patience_counter += 1
                if patience_counter >= patience:
                    exit_now.fill_(1)
            else:
                lowest_loss = valid_loss
                patience_counter = 0
        dist.barrier()
        dist.broadcast(exit_now, src=0)
        if exit_now.item():
            break


def main(model, optimizer, train_loader, valid_loader):
    train(model, optimizer, train_loader, valid_loader, 100, 5, dist.get_rank())
