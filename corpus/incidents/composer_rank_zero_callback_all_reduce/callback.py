"""Callback base classes of a Composer-style trainer. `RankZeroCallback` runs its events on global
rank 0 only -- convenient for callbacks that only log.

Thread: https://github.com/mosaicml/composer/issues/239 ("Remove `RankZeroCallback` and `RankZeroLogger`"); the
callback that hit it was fixed in https://github.com/mosaicml/composer/pull/238 ("Fix the speed monitor")
Project: mosaicml/composer
What hung: "The `RankZeroCallback` and `RankZeroLogger` cannot make any calls to `composer.utils.dist`.
This has led to bugs where the entire training process hangs." The SpeedMonitor was a
RankZeroCallback whose batch-end handler all-reduces the sample count; its events ran on rank 0
alone, which waited in the all-reduce. "Since the speed monitor calls `dist.all_reduce`, it must run
on all ranks now."
Fix (#238, then #239): make SpeedMonitor a plain Callback that runs on every rank, and remove the
rank-zero base classes in favour of guarding only the rank-zero work itself.
Expected rankcheck finding: RC102 on the rank test's `return` in `RankZeroCallback.run_event`,
which skips, on every rank but 0, the event handler that reaches `dist.all_reduce` (the
rank-zero-only dispatch is written as an early return, not as a decorator).
"""
import torch.distributed as dist


class Callback:
    def run_event(self, event: str, state, logger) -> None:
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state, logger)


class RankZeroCallback(Callback):
    def run_event(self, event: str, state, logger) -> None:
        if dist.get_rank() != 0:
            return  # expect: RC102
        return self._run_event(event, state, logger)

    def _run_event(self, event: str, state, logger) -> None:
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state, logger)
