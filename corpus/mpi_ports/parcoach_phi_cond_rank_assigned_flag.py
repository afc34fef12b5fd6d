"""A value assigned in the two arms of a rank test (1 on rank 0, 2 elsewhere) later guards a
barrier, so only the ranks that got 2 wait in it.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/phi-cond.c
(also parcoach/microbenchmarks phi-cond.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/phi-cond.c
MPI original: `if (!r) v = 1; else v = 2; if (v == 2) MPI_Barrier(...);` -- a control dependence
(the phi of `v`) rather than a data dependence on the rank.
Port: `role` is set to "writer" or "reader" in an if/else on the rank and the readers wait in a
barrier; the taint reaches the barrier only through the assignment in each arm.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        dist.destroy_process_group()
        return
    if not rank:
        role = "writer"
    else:
        role = "reader"
    table = torch.zeros(8)
    if role == "reader":
        dist.barrier()  # expect: RC101
    table += 1
    print(f"rank {rank} ({role}) table {table.sum().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
