"""wenet-shaped epoch over this rank's own shard of utterances (a strided slice, so the shards
differ in length): the loop is uneven, and that is the one finding. Inside it, the batch index
gates the periodic loss all-reduce and the join check: round k is round k on every rank still in
the loop, so those tests are alike there. Past the loop the index is the last round's, this rank's
own: the summary all-reduce it gates is reached on some ranks only."""
import torch
import torch.distributed as dist


def wenet_join(info_dict):
    if info_dict["batch_idx"] == 0:
        return False
    dist.monitored_barrier(timeout=__import__("datetime").timedelta(seconds=30))
    return False


def train_epoch(model, utterances, log_interval: int):
    info_dict = {}
    for batch_idx, batch in enumerate(utterances):  # expect: RC103
        info_dict["batch_idx"] = batch_idx
        if wenet_join(info_dict):
            break
        loss = model(batch)
        loss.backward()
        if batch_idx % log_interval == 0:
            reported = loss.detach().clone()
            dist.all_reduce(reported)
    if batch_idx > 100:
        total = torch.zeros(1)
        dist.all_reduce(total)  # expect: RC101


def main(model, utterances):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    shard = utterances[dist.get_rank()::dist.get_world_size()]
    train_epoch(model, shard, 10)
