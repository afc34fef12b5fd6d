"""Every rank all-reduces its gradient buffer, but odd ranks keep it in float64 and even ranks in
float32.

Origin: MPI Bugs Initiative, generator scripts/generators/CollArgGenerator.py in mquinson/MBI
("Generate code with type mismatch"), generated code ParamMatching_Data_MPI_Allreduce_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollArgGenerator.py
MPI original: `MPI_Datatype type = MPI_INT; if (rank % 2) type = MPI_FLOAT; MPI_Allreduce(&val,
&sum, 1, type, op, newcom);` -- "Odd ranks use MPI_INT as the datatype while even ranks use
MPI_FLOAT" (ERROR: DatatypeMatching).
Port: the datatype is the tensor's dtype: `dtype = torch.float32; if rank % 2: dtype =
torch.float64`. (MBI's int/float pair have the same width; float32/float64 differ in size, which
is how the mismatch shows with gloo.)
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dtype = torch.float32
    if rank % 2:
        dtype = torch.float64
    grad = torch.ones(64, dtype=dtype) * (rank + 1)
    dist.all_reduce(grad)  # expect: RC104
    print(f"rank {rank} grad[0] {grad[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
