"""A ring exchange with isend/irecv where even and odd ranks post them in different orders: point-to-point, not collectives."""
import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    payload = torch.full((4,), float(rank))
    incoming = torch.empty(4)
    for _ in range(args.rounds):
        if rank % 2 == 0:
            send_req = dist.isend(payload, dst=right)
            recv_req = dist.irecv(incoming, src=left)
        else:
            recv_req = dist.irecv(incoming, src=left)
            send_req = dist.isend(payload, dst=right)
        send_req.wait()
        recv_req.wait()
        payload = incoming.clone()
    if rank == 0:
        print("after the ring:", payload.tolist())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
