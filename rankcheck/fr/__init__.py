"""`rankcheck fr`: post-mortem of PyTorch flight-recorder dumps.

When a job has already hung, the flight recorder (a per-rank ring buffer of recent collectives
that torch dumps on timeout or on demand) answers "which rank is behind, and at what". This
package reads those dumps without torch, lines the ranks up per process group, names the rank
that diverged with the collective and the user-code line from the recorded stack, and, given the
source tree, says whether `rankcheck check` flagged that line.

Modules, one concern each: `layouts` (which keys each dump version has), `model` (the normalised
records), `reader` (files -> records, safe unpickling), `frames` (which frame is user code),
`analyze` (the verdict), `crossref` (the static-analysis cross-reference), `render` (text/JSON),
`cli` (argument parsing).
"""

from rankcheck.fr.analyze import Analysis, Verdict, analyze
from rankcheck.fr.model import DumpError, Entry, Frame, RankDump
from rankcheck.fr.reader import read_dump, read_dumps

__all__ = [
    "Analysis",
    "DumpError",
    "Entry",
    "Frame",
    "RankDump",
    "Verdict",
    "analyze",
    "read_dump",
    "read_dumps",
]
