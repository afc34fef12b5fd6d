"""A trimmed copy of the parts of NVIDIA ALCHEMI Toolkit (NVIDIA/nvalchemi-toolkit, nvalchemi/*, July
2026) that a domain-decomposed NPT run goes through: the model mixin that adapts a wrapped
potential's outputs, the halo machinery and output consolidation of `DomainParallel`, and the NPT
integrator of the distributed example."""
