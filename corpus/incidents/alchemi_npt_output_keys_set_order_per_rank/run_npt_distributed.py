"""Domain-decomposed NPT molecular dynamics of a crystal with a MACE potential, as the toolkit's
`06_mace_npt_distributed` example (`torchrun --nproc_per_node=4 run_npt_distributed.py`): each rank
owns one slab of the cell and evaluates the potential on its atoms plus a halo; energy and stress are
summed over the ranks, halo force partials are sent back to their owners.

Thread: https://github.com/NVIDIA/nvalchemi-toolkit/pull/143 ("fix distributed deadlock that comes up
in npt", merged as 72c91b6)
Project: NVIDIA/nvalchemi-toolkit (nvalchemi/models/base.py,
nvalchemi/distributed/output_consolidation.py)
What hung: the PR: the NPT example "hung under `DomainParallel`, with ranks issuing mismatched
collectives (`ALLTOALL_BASE` vs `ALLREDUCE`) at the same NCCL SeqNum until the 600 s watchdog
aborted. Root cause: the model output dict was seeded from a `set` (`BaseModelMixin.output_data()`
returns `active_outputs & supported`), whose iteration order is randomized per process (Python
string-hash seed). Output consolidation iterates that dict and issues one collective per key --
`all_reduce` for per-graph outputs (energy/stress) and a halo reverse-exchange (`all_to_all`) for
per-atom autograd outputs (forces) -- so each rank issued those collectives in a different order
and NCCL deadlocked. It surfaced under NPT because that is the example requesting `stress`". With
three keys, one rank walks e.g. stress, forces, energy and another energy, stress, forces: at the
second collective the first is in the all-to-all of the forces and the second in the all-reduce of
the stress.
Fix (the PR, merged): `adapt_output` seeds the dict from `sorted(self.output_data())` and
`consolidate_*_outputs` iterate `sorted(output.items())`, so the per-key collective schedule is the
same on every rank.
Expected rankcheck finding: RC106 on the branch of `consolidate_padded_outputs`
(alchemi_lite/distributed/consolidation.py) whose arms issue different collectives (an all-reduce
for the keys to sum, the halo all-to-all for per-atom autograd keys), taken in a per-process key
order.
(Trimmed: ShardTensor and the sharded-storage consolidation path, the JIT adapters, the MTK barostat
(a Berendsen one here), neighbor-list caching. Inferred: the crystal setup and the toy MACE-style
model; the slab decomposition stands for the toolkit's domain decomposition.)
"""
import argparse
import os

import torch
import torch.distributed as dist

from alchemi_lite.distributed import DomainConfig, DomainParallel, MLIPSpec
from alchemi_lite.dynamics import BerendsenNPT, SystemState
from alchemi_lite.models import MACEWrapper

AMU_TO_EV_FS2_A2 = 103.6427  # 1 amu = 103.64 eV fs^2 / A^2


def fcc_lattice(a: float, reps: int, device) -> tuple:
    basis = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]], device=device)
    grid = torch.stack(torch.meshgrid(*[torch.arange(reps, device=device)] * 3, indexing="ij"), -1).reshape(-1, 1, 3)
    positions = ((grid + basis[None]) * a).reshape(-1, 3).double()
    cell = torch.eye(3, dtype=torch.float64, device=device) * a * reps
    return positions, cell


def parse_args():
    parser = argparse.ArgumentParser(description="Distributed NPT with a MACE potential")
    parser.add_argument("--lattice", type=float, default=5.26)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--dt", type=float, default=2.0, help="fs")
    parser.add_argument("--temperature", type=float, default=80.0)
    parser.add_argument("--pressure", type=float, default=1.0, help="bar")
    parser.add_argument("--cutoff", type=float, default=5.0)
    parser.add_argument("--checkpoint", default="mace_ar.pt")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1234)
    return parser.parse_args()


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(args.seed)  # same initial velocities on every rank

    model = MACEWrapper(num_species=1, cutoff=args.cutoff).double().to(device)
    if os.path.exists(args.checkpoint):
        model.load_state_dict(torch.load(args.checkpoint, map_location=device))
    model.eval()
    domain_model = DomainParallel(model, DomainConfig(cutoff=args.cutoff), MLIPSpec())

    positions, cell = fcc_lattice(args.lattice, args.reps, device)
    n = positions.size(0)
    masses = torch.full((n,), 39.948 * AMU_TO_EV_FS2_A2, dtype=torch.float64, device=device)
    velocities = torch.randn(n, 3, dtype=torch.float64, device=device)
    velocities *= torch.sqrt(8.617333262e-5 * args.temperature / masses)[:, None]
    state = SystemState(positions=positions, velocities=velocities, masses=masses,
                        species=torch.zeros(n, dtype=torch.long, device=device), cell=cell)

    integrator = BerendsenNPT(domain_model, dt=args.dt, temperature=args.temperature, pressure_bar=args.pressure)
    energy, forces, _ = integrator.compute(state)
    for step in range(1, args.steps + 1):
        energy, forces, temp, pressure = integrator.step(state, forces)
        if rank == 0 and step % args.log_every == 0:
            volume = torch.det(state.cell).abs().item()
            print(f"step {step:6d}  E {energy.item():12.5f} eV  T {temp.item():7.2f} K  "
                  f"P {pressure.item():9.2f} bar  V {volume:10.2f} A^3", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
