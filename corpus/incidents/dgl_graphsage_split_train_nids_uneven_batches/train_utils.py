"""One training epoch over a NodeDataLoader, shared by the single- and multi-GPU scripts."""
import time

import torch as th

from model import compute_acc


def load_subtensor(nfeat, labels, seeds, input_nodes, dev_id):
    batch_inputs = nfeat[input_nodes].to(dev_id)
    batch_labels = labels[seeds].to(dev_id)
    return batch_inputs, batch_labels


def train_one_epoch(model, dataloader, nfeat, labels, optimizer, loss_fcn, dev_id, proc_id, log_every):
    model.train()
    iter_tput = []
    tic_step = time.time()
    for step, (input_nodes, seeds, blocks) in enumerate(dataloader):  # expect: RC103
        batch_inputs, batch_labels = load_subtensor(nfeat, labels, seeds, input_nodes, dev_id)
        blocks = [block.int().to(dev_id) for block in blocks]
        batch_pred = model(blocks, batch_inputs)
        loss = loss_fcn(batch_pred, batch_labels)
        optimizer.zero_grad()
        loss.backward()  # DDP all-reduces the gradients here
        optimizer.step()
        iter_tput.append(len(seeds) / (time.time() - tic_step))
        if step % log_every == 0 and proc_id == 0:
            acc = compute_acc(batch_pred, batch_labels)
            print(f"Step {step:05d} | Loss {loss.item():.4f} | Train Acc {acc.item():.4f} "
                  f"| Speed (samples/sec) {sum(iter_tput[3:]) / max(len(iter_tput) - 3, 1):.4f}")
        tic_step = time.time()
    return step + 1
