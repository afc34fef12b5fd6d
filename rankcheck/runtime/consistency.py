"""Consistency mode (`arm(check=True)`): every collective's fingerprint is cross-checked between
the ranks of its group before it runs, through the job's own store.

The fingerprint and the rule are the verifier's (`rankcheck.verify.instrument` builds the
message, `rankcheck.verify.coordinator` decides "diverged" and words it); only the transport
differs: no verifier process, each rank publishes its message under the collective's
(group, sequence number) and reads its peers'. Like TORCH_DISTRIBUTED_DEBUG=DETAIL, a mismatch is
an error on every rank, before the collective that would hang, but it names each rank's line.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

WAIT = datetime.timedelta(days=1)  # a peer that never arrives is the watchdog's to report


class CollectiveMismatchError(RuntimeError):
    """The ranks of a group were about to run different collectives (or different arguments)."""


class Consistency:
    def __init__(self, store: Any, rank: int, world_size: int) -> None:
        self.store = store
        self.rank = rank
        self.world_size = world_size

    def exchange(self, message: dict) -> None:
        from rankcheck.verify.coordinator import Coordinator

        slot = f"rankcheck/fingerprint/{message['group_key']}/{message['group_seq']}"
        self.store.set(f"{slot}/{self.rank}", json.dumps(message))
        keys = [f"{slot}/{member}" for member in message["members"]]
        self.store.wait(keys, WAIT)
        coordinator = Coordinator(self.world_size)
        for key in keys:
            coordinator.enter(json.loads(self.store.get(key)))
        coordinator.evaluate()
        if coordinator.divergence is not None:
            raise CollectiveMismatchError(f"rankcheck: collective mismatch: {coordinator.divergence.summary}")
