"""Logger shared by the pyg pipeline (trimmed from mlpf/pyg/logger.py)."""
import logging
import sys

_logger = logging.getLogger("mlpf")
if not _logger.handlers:
    _console = logging.StreamHandler(sys.stdout)
    _console.setFormatter(logging.Formatter("[%(asctime)s] %(levelname)s: %(message)s"))
    _logger.addHandler(_console)
    _logger.setLevel(logging.INFO)
