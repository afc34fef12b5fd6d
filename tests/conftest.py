import sys
from pathlib import Path

# tests/ holds helper modules (corpus_support) imported by the test files.
sys.path.insert(0, str(Path(__file__).resolve().parent))
