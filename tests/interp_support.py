"""Shared helper for the tests of the interpreter's memo."""

from __future__ import annotations

from typing import List


def record_interpreted(monkeypatch) -> List[str]:
    """The functions interpreted from now on (each time one is), in order."""
    from rankcheck.interp.interpreter import Interpreter

    interpreted: List[str] = []
    original = Interpreter._interpret

    def recording(self, fn, bindings, as_root=True):
        interpreted.append(fn.qualname)
        return original(self, fn, bindings, as_root)

    monkeypatch.setattr(Interpreter, "_interpret", recording)
    return interpreted
