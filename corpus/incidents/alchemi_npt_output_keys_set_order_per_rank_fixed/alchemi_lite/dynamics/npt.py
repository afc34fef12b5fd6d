"""NPT molecular dynamics (nvalchemi/dynamics, reduced to velocity Verlet with Berendsen thermostat and
barostat). Every rank keeps the replicated state and integrates its owned atoms; the updated owned
rows are summed across ranks so that all ranks hold the same positions again."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist

KB_EV = 8.617333262e-5          # eV/K
EV_A3_TO_BAR = 1.602176634e6    # eV/A^3 -> bar


@dataclass
class SystemState:
    positions: torch.Tensor
    velocities: torch.Tensor
    masses: torch.Tensor
    species: torch.Tensor
    cell: torch.Tensor

    def batch(self):
        return dict(positions=self.positions, cell=self.cell, species=self.species)


class BerendsenNPT:
    def __init__(self, model, dt: float, temperature: float, pressure_bar: float, tau_t: float = 100.0,
                 tau_p: float = 1000.0, compressibility: float = 4.57e-5, group=None):
        self.model = model
        self.dt = dt
        self.temperature = temperature
        self.pressure = pressure_bar
        self.tau_t = tau_t
        self.tau_p = tau_p
        self.compressibility = compressibility
        self.group = group
        # the barostat needs the stress every step
        self.model.model.request_outputs("energy", "forces", "stress")

    def _replicate(self, full: torch.Tensor, owned_ids: torch.Tensor, owned_rows: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(full)
        out[owned_ids] = owned_rows
        dist.all_reduce(out, group=self.group)
        return out

    def compute(self, state: SystemState):
        out = self.model(state.batch())
        forces = self._replicate(state.positions, out["owned_ids"], out["forces"].detach())
        return out["energy"].detach(), forces, out["stress"].detach()[0]

    def kinetic_temperature(self, state: SystemState) -> torch.Tensor:
        ke = 0.5 * (state.masses[:, None] * state.velocities ** 2).sum()
        return 2.0 * ke / (3 * state.positions.size(0) * KB_EV)

    def step(self, state: SystemState, forces: torch.Tensor):
        accel = forces / state.masses[:, None]
        state.velocities = state.velocities + 0.5 * self.dt * accel
        state.positions = state.positions + self.dt * state.velocities
        energy, forces, stress = self.compute(state)
        state.velocities = state.velocities + 0.5 * self.dt * forces / state.masses[:, None]

        temp = self.kinetic_temperature(state)
        lam = torch.sqrt(1.0 + self.dt / self.tau_t * (self.temperature / temp - 1.0))
        state.velocities = state.velocities * lam

        volume = torch.det(state.cell).abs()
        kinetic = (state.masses[:, None, None] * state.velocities[:, :, None] * state.velocities[:, None, :]).sum(0)
        pressure_tensor = (kinetic / volume - stress) * EV_A3_TO_BAR
        pressure = torch.diagonal(pressure_tensor).mean()
        mu = (1.0 - self.compressibility * self.dt / self.tau_p * (self.pressure - pressure)) ** (1.0 / 3.0)
        state.positions = state.positions * mu
        state.cell = state.cell * mu
        return energy, forces, temp, pressure
