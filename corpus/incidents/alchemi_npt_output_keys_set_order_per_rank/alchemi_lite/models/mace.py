"""A MACE-style interatomic potential wrapper (the message passing reduced to radial-basis pair
features with one interaction layer); forces and stress come from autograd on positions and strain."""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from .base import BaseModelMixin, ModelConfig


class BesselBasis(nn.Module):
    def __init__(self, cutoff: float, num_basis: int = 8):
        super().__init__()
        self.cutoff = cutoff
        self.register_buffer("freqs", torch.arange(1, num_basis + 1) * math.pi / cutoff)

    def forward(self, r: torch.Tensor) -> torch.Tensor:
        r = r.unsqueeze(-1)
        envelope = 0.5 * (torch.cos(math.pi * r / self.cutoff) + 1.0) * (r < self.cutoff)
        return math.sqrt(2.0 / self.cutoff) * torch.sin(self.freqs * r) / r * envelope


class MACEWrapper(BaseModelMixin, nn.Module):
    def __init__(self, num_species: int = 4, hidden: int = 64, cutoff: float = 5.0):
        nn.Module.__init__(self)
        self.model_config = ModelConfig(outputs=frozenset({"energy", "forces", "stress"}),
                                        active_outputs={"energy", "forces"}, cutoff=cutoff)
        self.embedding = nn.Embedding(num_species, hidden)
        self.radial = BesselBasis(cutoff)
        self.radial_mlp = nn.Sequential(nn.Linear(8, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, data):
        positions = data["positions"]
        cell = data["cell"]
        strain = torch.zeros(3, 3, dtype=positions.dtype, device=positions.device, requires_grad=True)
        deform = torch.eye(3, dtype=positions.dtype, device=positions.device) + strain
        pos = positions @ deform
        cell_d = cell @ deform
        src, dst, shifts = data["edge_index"][0], data["edge_index"][1], data["shifts"]
        vec = pos[dst] - pos[src] + shifts @ cell_d
        r = vec.norm(dim=-1).clamp_min(1e-6)
        h = self.embedding(data["species"])
        messages = self.radial_mlp(self.radial(r)) * h[src]
        agg = torch.zeros_like(h).index_add_(0, dst, messages)
        node_energy = self.readout(h + agg).squeeze(-1) * data["node_weight"]
        energy = node_energy.sum().reshape(1)
        raw = {"energy": energy}
        wanted = self.output_data()
        if "forces" in wanted or "stress" in wanted:
            grads = torch.autograd.grad(energy.sum(), [positions, strain], create_graph=self.training,
                                        allow_unused=True)
            if "forces" in wanted:
                raw["forces"] = -grads[0]
            if "stress" in wanted:
                volume = torch.det(cell).abs()
                raw["stress"] = (grads[1] / volume).reshape(1, 3, 3)
        return self.adapt_output(raw, data)

