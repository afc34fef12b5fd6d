"""Event engine of the trainer: every rank runs every event through every callback."""


class Engine:
    def __init__(self, state, logger, callbacks):
        self.state = state
        self.logger = logger
        self.callbacks = list(callbacks)

    def run_event(self, event: str) -> None:
        for callback in self.callbacks:
            callback.run_event(event, self.state, self.logger)


def train_loop(engine, model, optimizer, dataloader):
    for batch in dataloader:
        engine.state.batch = batch
        engine.run_event("batch_start")
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        engine.run_event("batch_end")
