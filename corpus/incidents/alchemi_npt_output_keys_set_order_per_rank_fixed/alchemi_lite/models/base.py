"""Model wrapper base (nvalchemi/models/base.py): the `ModelConfig` of a wrapped potential and the
mixin that turns the raw model output into the dict of requested outputs."""
from __future__ import annotations

import abc
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import torch


@dataclass
class ModelConfig:
    """What a wrapped potential can compute and what the caller asked for.

    `outputs`: every output the model supports. `active_outputs`: the subset requested by the
    current workflow (e.g. the NPT integrator adds "stress"). `autograd_outputs`: outputs obtained by
    differentiating the energy (forces, stress).
    """

    outputs: frozenset = frozenset({"energy", "forces"})
    active_outputs: set = field(default_factory=lambda: {"energy", "forces"})
    autograd_outputs: frozenset = frozenset({"forces", "stress"})
    needs_pbc: bool = True
    cutoff: float = 5.0


class BaseModelMixin(abc.ABC):
    model_config: ModelConfig

    def output_data(self) -> set:
        """The outputs to produce: the requested ones the model supports."""
        return set(self.model_config.active_outputs) & set(self.model_config.outputs)

    def request_outputs(self, *keys: str) -> None:
        for key in keys:
            if key not in self.model_config.outputs:
                raise ValueError(f"{type(self).__name__} cannot compute {key!r}")
            self.model_config.active_outputs.add(key)

    def adapt_output(self, model_output: Any, data: Optional[Mapping[str, Any]]) -> "OrderedDict[str, Any]":
        """Map the raw model output to an ordered dict with one entry per expected output key
        (None where the model did not produce it). Tensors may be graph-attached."""
        # output_data() is a set of strings, iterated in a per-process (hash-seeded) order: sort it so
        # every rank seeds the dict, and so orders its per-key collectives, identically
        output = OrderedDict((key, None) for key in sorted(self.output_data()))
        if isinstance(model_output, dict):
            for key in output:
                value = model_output.get(key)
                if isinstance(value, torch.Tensor) and key == "energy" and value.dim() == 1:
                    value = value.unsqueeze(-1)
                output[key] = value
        elif isinstance(model_output, torch.Tensor):
            output["energy"] = model_output
        return output

    @abc.abstractmethod
    def forward(self, data: Mapping[str, Any]) -> "OrderedDict[str, Any]":
        ...
