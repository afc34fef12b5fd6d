"""mace-shaped early stopping: rank 0 alone keeps the patience counter, and its `break` sits under a
test every rank would answer alike (`if valid_loss >= lowest_loss:`, on the all-reduced
validation loss) inside `if rank == 0:`. Rank 0 leaves the epoch loop past the end-of-epoch
barrier the other ranks wait in.
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
        if rank == 0:
            if valid_loss >= lowest_loss:
                patience_counter += 1
                if patience_counter >= patience:
                    break  # expect: RC102
            else:
                lowest_loss = valid_loss
                patience_counter = 0
        dist.barrier()


def main(model, optimizer, train_loader, valid_loader):
    train(model, optimizer, train_loader, valid_loader, 100, 5, dist.get_rank())
