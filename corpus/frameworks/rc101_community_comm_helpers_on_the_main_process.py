"""Detection, classification and segmentation training loops written on the communication helpers
of the libraries they build on (detectron2's comm, mmengine.dist, ignite.distributed, horovod,
timm): each calls one of them on the main process only, where every process must."""
import horovod.torch as hvd
import ignite.distributed as idist
import torch
from detectron2.utils import comm
from mmengine.dist import all_reduce, collect_results, master_only
from timm.utils import distribute_bn


def detectron2_eval(evaluator, results):
    if comm.is_main_process():
        predictions = comm.gather(results, dst=0)  # expect: RC101
        evaluator.process(predictions)


def mmdet_test(model, results, size):
    rank, _ = mmengine_rank()
    if rank == 0:
        return collect_results(results, size)  # expect: RC101
    return None


def mmengine_rank():
    from mmengine.dist import get_dist_info
    return get_dist_info()


@master_only
def log_loss(loss):  # expect: RC107
    all_reduce(loss)
    print(loss.item())


def ignite_validate(metric_value):
    if idist.get_rank() == 0:
        metric_value = idist.all_reduce(metric_value)  # expect: RC101
    return metric_value


def horovod_epoch_end(model, epoch):
    if hvd.rank() == 0:
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)  # expect: RC101
        torch.save(model.state_dict(), f"ckpt-{epoch}.pt")


def timm_epoch_end(model, world_size, rank):
    if rank == 0:
        distribute_bn(model, world_size, True)  # expect: RC101
