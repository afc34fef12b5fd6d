"""Resuming: only rank 0 loads the checkpoint through the project's MPI helper, which broadcasts
the bytes over MPI.COMM_WORLD; the other ranks go straight to the parameter broadcast, and both
sides wait in different collectives (openai/guided-diffusion#23)."""
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
                    dist_util.load_state_dict(self.resume_checkpoint, map_location="cpu")  # expect: RC101
                )
        dist_util.sync_params(self.model.parameters())
