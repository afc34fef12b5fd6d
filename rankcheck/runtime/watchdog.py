"""The watchdog: a daemon thread in every armed rank.

Every interval it publishes the rank's heartbeat into the dump directory, answers evidence
requests, and, on the lowest-numbered rank still alive (the leader), reads every heartbeat and
decides (`detect`). On a hang or a straggler the leader opens a bundle, asks every rank for its
evidence, waits for it, and writes and prints the verdict (`rankcheck.fr.bundle`).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections import deque
from typing import Any, Deque, Optional, Set

from rankcheck.runtime import bundle as layout
from rankcheck.runtime.detect import HANG, STRAGGLER, Detection, detect, gone_ranks
from rankcheck.runtime.evidence import write_rank_evidence
from rankcheck.runtime.launch import process_gone

HISTORY = 240


class Watchdog(threading.Thread):
    def __init__(self, guard: Any) -> None:
        super().__init__(name="rankcheck-watchdog", daemon=True)
        self.guard = guard
        self.history: Deque[dict] = deque(maxlen=HISTORY)
        self.handled: Set[str] = set()
        self.hang_reported_at: Optional[float] = None
        self.straggler_reported = False
        self._stop_event = threading.Event()
        self._publish_lock = threading.Lock()
        self._failed_once = False
        self.host = socket.gethostname()

    def still_running(self, beat: dict) -> bool:
        """Whether a rank with a late heartbeat is a live process (known on this host only)."""
        return beat.get("host") == self.host and not process_gone(int(beat.get("pid", 0)))

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        interval = self.guard.settings.interval_s
        while not self._stop_event.wait(interval):
            try:
                self.tick()
            except Exception as exc:  # the guard must never take the job down
                if not self._failed_once:
                    self._failed_once = True
                    print(f"rankcheck: watchdog on rank {self.guard.rank}: {type(exc).__name__}: {exc}",
                          file=sys.stderr, flush=True)

    def publish(self) -> dict:
        with self._publish_lock:
            beat = self.guard.heartbeat(time.time())
            self.history.append(beat)
            layout.write_json(layout.heartbeat_path(self.guard.dump_dir, self.guard.job, self.guard.rank), beat)
            return beat

    def tick(self) -> None:
        self.publish()
        request = layout.read_request(self.guard.dump_dir, self.guard.job)
        if request is not None and request["bundle"] not in self.handled:
            self.handled.add(request["bundle"])
            self._aside(self.answer, request["bundle"])
        beats = layout.read_heartbeats(self.guard.dump_dir, self.guard.job)
        now = time.time()
        gone = set(gone_ranks(beats, now, self.guard.settings, self.still_running))
        alive = [r for r in beats if r not in gone]
        if not alive or min(alive) != self.guard.rank:
            return
        if self.hang_reported_at is not None:
            if max(float(beats[r].get("last_progress", 0)) for r in alive) > self.hang_reported_at:
                self.hang_reported_at = None  # progress again: the next hang is a new one
            return
        found = detect(beats, now, self.guard.settings, self.straggler_reported, self.still_running)
        if found is not None:
            if found.kind == HANG:
                self.hang_reported_at = now
            elif found.kind == STRAGGLER:
                self.straggler_reported = True
            self._aside(self.investigate, found, beats)

    def _aside(self, work, *args) -> None:
        """Evidence and analysis take seconds (py-spy, the static check): off this thread, which
        must go on publishing, or the others would take this rank for gone."""
        threading.Thread(target=work, args=args, name="rankcheck-evidence", daemon=True).start()

    def answer(self, bundle: str) -> None:
        self.handled.add(bundle)
        history = list(self.history)
        write_rank_evidence(bundle, self.guard.rank, history, self.guard.environment())

    def investigate(self, found: Detection, beats: dict) -> None:
        from rankcheck.fr.bundle import analyze_bundle, write_verdict

        guard = self.guard
        folder = layout.new_bundle(guard.dump_dir, found.kind)
        layout.write_json(os.path.join(folder, layout.JOB_FILE), {
            "job": guard.job, "world_size": guard.world_size, "backend": guard.backend,
            "trigger": found.kind, "detection": found.as_json(), "detected_by": guard.rank,
            "detected_at": time.time(), "source_root": guard.source_root,
            "timeout_s": guard.timeout.total_seconds() if guard.timeout else None,
        })
        layout.write_json(os.path.join(folder, "heartbeats.json"), {str(r): b for r, b in beats.items()})
        layout.request_evidence(guard.dump_dir, guard.job, folder, found.kind)
        self.answer(folder)
        alive = [r for r in beats if r not in found.gone]
        deadline = time.time() + guard.settings.evidence_wait_s
        while time.time() < deadline and not all(
            os.path.exists(os.path.join(layout.rank_dir(folder, r), layout.COMPLETE)) for r in alive
        ):
            time.sleep(0.05)
        verdict = analyze_bundle(folder)
        write_verdict(folder, verdict)
        print(verdict.text, file=sys.stderr, flush=True)
