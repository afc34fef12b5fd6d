"""Resuming: every rank calls the project's MPI helper (rank 0 reads, all receive the bytes over
MPI.COMM_WORLD), then the parameters are broadcast; only the log line is rank 0's."""
import torch.distributed as dist

import dist_util


class TrainLoop:
    def __init__(self, model, resume_checkpoint, ema_rate=0.9999):
        self.model = model
        self.resume_checkpoint = resume_checkpoint
        self.ema_rate = ema_rate
        self._load_and_sync_parameters()

    def _load_and_sync_parameters(self):
        if self.resume_checkpoint:
            if dist.get_rank() == 0:
                print(f"loading model from checkpoint: {self.resume_checkpoint}")
            self.model.load_state_dict(
                dist_util.load_state_dict(self.resume_checkpoint, map_location="cpu")
            )
        dist_util.sync_params(self.model.parameters())
