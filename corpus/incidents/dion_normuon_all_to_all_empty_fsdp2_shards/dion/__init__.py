"""Dion optimizers (trimmed to NorMuon): part of the reconstruction of
https://github.com/microsoft/dion/pull/74; see dion/megabatch_base.py for the incident description."""
from .normuon import NorMuon

__all__ = ["NorMuon"]
