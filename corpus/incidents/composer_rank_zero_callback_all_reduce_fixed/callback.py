"""Safe twin of composer_rank_zero_callback_all_reduce: the rank-zero callback base class is gone
(composer#239); every callback's events run on every rank, and rank-zero work is guarded where it
happens (see speed_monitor.py).

Thread: https://github.com/mosaicml/composer/issues/239 (and #238)
"""


class Callback:
    def run_event(self, event: str, state, logger) -> None:
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state, logger)
