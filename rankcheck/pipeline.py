"""Summaries for many files: reading, decoding and summarizing each one.

The per-module step is pure (`summarize.summarize_source`), so this is where caching, fanning out
across processes and skipping files that cannot matter belong (the performance work lives here,
not in the analysis).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from rankcheck.catalog import Catalog
from rankcheck.discover import SourceFile
from rankcheck.ir import ModuleSummary, ParseProblem
from rankcheck.summarize import decode_source, summarize_source


@dataclass(frozen=True)
class PipelineOptions:
    cache_dir: Optional[Path] = None  # None: no cache
    jobs: Optional[int] = None  # None: sized to the machine


def summarize_file(source: SourceFile, text_override: Optional[str] = None) -> ModuleSummary:
    """Read, decode and summarize one file; a problem becomes part of the summary, never raises."""
    if text_override is not None:
        text: Optional[str] = text_override
        problem = None
    else:
        try:
            data = source.path.read_bytes()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            return ModuleSummary(source.display, source.module, source.is_package, problem=ParseProblem(f"cannot read file: {reason}", 1, 1))
        text, problem = decode_source(data)
    if text is None:
        return ModuleSummary(source.display, source.module, source.is_package, problem=problem)
    return summarize_source(text, source.display, source.module, source.is_package)


def collect_summaries(
    files: Sequence[SourceFile],
    overrides: Dict[str, str],
    catalog: Catalog,
    options: PipelineOptions = PipelineOptions(),
) -> List[ModuleSummary]:
    """One summary per file, in the order given. `overrides` maps absolute paths to unsaved text."""
    return [summarize_file(source, overrides.get(str(source.path))) for source in files]
