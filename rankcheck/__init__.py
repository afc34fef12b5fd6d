"""rankcheck: find the source-level causes of hung distributed PyTorch jobs before they run.

The library API is `check_paths(...)`; the CLI, the language server, the pre-commit entry and the
tests all call it.
"""

__version__ = "0.2.0"

from rankcheck.ftypes import ChainStep, Finding, Guard, Location, RankSource


def check_paths(*args, **kwargs):
    """See `rankcheck.api.check_paths`."""
    from rankcheck.api import check_paths as _check_paths

    return _check_paths(*args, **kwargs)


__all__ = ["ChainStep", "Finding", "Guard", "Location", "RankSource", "__version__", "check_paths"]
