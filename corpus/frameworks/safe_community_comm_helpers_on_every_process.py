"""The same loops as the libraries' own trainers write them: every process calls the helper, and
only the main process's own work (evaluating what was gathered, saving, printing) stays under its
test; @master_only wraps what is local."""
import horovod.torch as hvd
import ignite.distributed as idist
import torch
from detectron2.utils import comm
from mmengine.dist import all_reduce, collect_results, get_dist_info, master_only
from timm.utils import distribute_bn


def detectron2_eval(evaluator, results):
    predictions = comm.gather(results, dst=0)
    if comm.is_main_process():
        evaluator.process(predictions)
    comm.synchronize()


def mmdet_test(model, results, size):
    rank, _ = get_dist_info()
    gathered = collect_results(results, size)
    return gathered if rank == 0 else None


@master_only
def log_loss(value):
    print(value)


def reduce_and_log(loss):
    all_reduce(loss)
    log_loss(loss.item())


def ignite_validate(metric_value):
    metric_value = idist.all_reduce(metric_value)
    if idist.get_rank() == 0:
        print(metric_value)
    return metric_value


def horovod_epoch_end(model, epoch):
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    if hvd.rank() == 0:
        torch.save(model.state_dict(), f"ckpt-{epoch}.pt")


def timm_epoch_end(model, world_size, rank):
    distribute_bn(model, world_size, True)
    if rank == 0:
        print("bn synced")
