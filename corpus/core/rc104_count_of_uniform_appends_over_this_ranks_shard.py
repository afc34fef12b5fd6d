"""A per-file status list built over this rank's slice of the files: each round appends the same
constant, but how many rounds there are is this rank's share (`files[rank::world]`, uneven where
the files do not divide by the ranks), so the status tensor all-reduced after the loop has a
per-rank length. The look-alike over an evened-out sampler is in
safe_count_of_uniform_appends_over_an_even_share.py."""
import torch
import torch.distributed as dist


def check_files(files, load):
    rank, world = dist.get_rank(), dist.get_world_size()
    status = []
    for path in files[rank::world]:
        load(path)
        status.append(1.0)
    ok = torch.tensor(status)
    dist.all_reduce(ok)  # expect: RC104
    return ok
