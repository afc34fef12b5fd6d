"""Trimmed prefix-tree layouts: a group of histories that share prefixes is packed into one
sequence; a layout decides which prefixes are shared (computed once) and which are repeated. At
CP>1 the packed sequence is cut into equal token slices, and a shared segment is owned by one CP
rank and read by the ranks whose tails depend on it."""
import json
import os
from dataclasses import dataclass, field

import torch

DATA_ROOT = os.environ.get("ART_CALIBRATION_DATA", "calibration_cells")


@dataclass
class Segment:
    start: int
    end: int
    readers: list = field(default_factory=list)  # token offsets of the segments that attend to it
    state_rows: int = 0

    def owner_rank(self, cp_size, total=None):
        return min(self.start * cp_size // max(total or self.end, 1), cp_size - 1)

    def reader_ranks(self, cp_size, total=None):
        return sorted({min(r * cp_size // max(total or r + 1, 1), cp_size - 1) for r in self.readers})


@dataclass
class PrefixTreeLayout:
    name: str
    tokens: torch.Tensor
    segments: list

    def token_slice(self, cp_rank, cp_size):
        n = self.tokens.numel()
        per = (n + cp_size - 1) // cp_size
        lo, hi = cp_rank * per, min((cp_rank + 1) * per, n)
        return self.tokens[lo:hi].unsqueeze(0), torch.arange(lo, hi).unsqueeze(0)


@dataclass
class HistoryGroup:
    name: str
    histories: list  # token lists


def load_group(cell, index) -> HistoryGroup:
    with open(os.path.join(DATA_ROOT, f"{cell}.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    row = rows[index]
    return HistoryGroup(name=f"{cell}/{index}", histories=row["histories"])


def _pack(name, group, share_depth):
    # share_depth 0: every history packed whole; 1: the common root shared; 2: nested sharing
    tokens, segments, offset = [], [], 0
    for i, h in enumerate(group.histories):
        shared = 0 if share_depth == 0 or i == 0 else min(len(h) // (4 - share_depth), len(h) - 1)
        tail = h[shared:]
        segments.append(Segment(start=offset, end=offset + len(tail), readers=[offset], state_rows=len(tail) // 64))
        tokens.extend(tail)
        offset += len(tail)
    return PrefixTreeLayout(name=name, tokens=torch.tensor(tokens), segments=segments)


def candidate_layouts(group):
    return [
        _pack("no_sharing", group, 0),
        _pack("depth_one", group, 1),
        _pack("uniform_depth_2", group, 2),
        _pack("automatic", group, 2 if len(group.histories) > 2 else 1),
    ]
