"""tomllib where the standard library has it (3.11+), tomli before."""

import sys

if sys.version_info >= (3, 11):
    import tomllib as toml_reader
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as toml_reader

TOMLDecodeError = toml_reader.TOMLDecodeError
loads = toml_reader.loads

__all__ = ["TOMLDecodeError", "loads"]
