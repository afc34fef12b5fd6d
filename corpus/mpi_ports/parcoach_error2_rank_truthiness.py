"""Every rank but rank 0 enters a barrier, guarded by the bare truthiness of the rank (`if rank:`).

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/error2.c (same body as
tests/MPI/basic/src/mismatch_barrier6.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/error2.c
MPI original: `if (r) MPI_Barrier(MPI_COMM_WORLD);` -- the rank used directly as the condition, so
rank 0 skips the barrier the others wait in.
Port: `if rank:` around `dist.barrier()`; the non-zero ranks wait there before reading a file that
rank 0 was supposed to have written.
"""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", default=os.path.join(tempfile.gettempdir(), "port_vocab.pt"))
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    vocab = torch.arange(100)
    if rank:
        dist.barrier()  # expect: RC101
        if os.path.exists(args.vocab):
            vocab = torch.load(args.vocab)
    print(f"rank {rank} has a vocabulary of {vocab.numel()} entries")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
