"""A helper that barriers is called only on odd ranks.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter_example_false_negative.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter_example_false_negative.c
MPI original: `void f() { MPI_Barrier(MPI_COMM_WORLD); }`; main: `if (rank % 2) f();` -- "false
negative with an intraprocedural analysis": the collective is one call away from the guard.
Port: `flush_metrics()` all-reduces a metrics buffer; main calls it only on odd ranks.
"""
import torch
import torch.distributed as dist


def flush_metrics(metrics: torch.Tensor) -> None:
    dist.all_reduce(metrics)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        print("This test needs at least 2 processes")
        dist.destroy_process_group()
        return
    print(f"Hi from proc {rank}")
    metrics = torch.tensor([float(rank), 1.0])
    if rank % 2:
        flush_metrics(metrics)  # expect: RC101
    print(f"Bye from proc {rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
