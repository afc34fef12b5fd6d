"""The rank is written through an alias of a state dict; a barrier guarded by the same entry read
through the original name is no longer called by every rank.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/pointer-alias.c
(also parcoach/microbenchmarks pointer-alias.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/pointer-alias.c
MPI original: `int a = 1; int *b = &a; if (a > 0) MPI_Barrier(...); MPI_Comm_rank(..., b);
if (a > 0) MPI_Barrier(...);` -- the first barrier is uniform, the second is rank-dependent
because `a` was overwritten through the pointer `b`.
Port: `state = {"slot": 1}` and `view = state` (same object); the first barrier under
`state["slot"] > 0` is taken by every rank; `view["slot"] = dist.get_rank()` then makes the
second, identical-looking guard rank-dependent.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    state = {"slot": 1}
    view = state
    if state["slot"] > 0:
        dist.barrier()
    view["slot"] = dist.get_rank()
    weights = torch.ones(4)
    if state["slot"] > 0:
        dist.barrier()  # expect: RC101
    print(f"slot {state['slot']} weights {weights.sum().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
