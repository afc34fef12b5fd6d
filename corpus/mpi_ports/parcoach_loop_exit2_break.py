"""A synchronised polling loop that a rank leaves with `break` as soon as the loop counter reaches
its own rank; the others keep issuing barriers.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/loop_exit2.c and
tests/MPI/basic/src/loop_finalize.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/loop_finalize.c
MPI original: `while (j < 20) { if (rank == j) { MPI_Finalize(); [exit(-1);] } j++; }
MPI_Barrier;` -- the matching rank stops taking part (finalizes) inside the loop while the other
ranks go on to the barrier.
Port: the loop body itself has the collective (a barrier per poll), and the matching rank stops
taking part by `break`ing out of the loop, the Python spelling of "this rank is done polling".
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        dist.destroy_process_group()
        return
    status = torch.zeros(1)
    for j in range(1, 20):
        dist.barrier()
        status += 1
        if rank == j:
            break  # expect: RC102
    dist.barrier()
    print(f"rank {rank} polled {int(status.item())} times")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
