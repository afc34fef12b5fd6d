"""LSQML-style reconstructor with position correction: every rank processes its chunk of the
scan positions, computes a position update for each of them, and the updates are combined over
ranks before they are applied."""
import torch

from parallel import MultiprocessMixin


class PositionCorrectedReconstructor(MultiprocessMixin):
    def __init__(self, probe, obj, positions, diffraction, options):
        self.probe, self.object = probe, obj
        self.positions = positions          # (n_positions, 2), identical on every rank
        self.diffraction = diffraction      # (n_positions, H, W)
        self.options = options
        self.init_process_group()
        all_indices = torch.arange(positions.shape[0], device=positions.device)
        self.indices_this_rank, self.chunk_sizes = self.get_chunk_of_current_rank(
            all_indices, return_chunk_sizes=True)

    def position_gradient(self, idx):
        patches = self.object.extract_patches(self.positions[idx], self.probe.shape[-2:])
        psi = self.probe.data * patches
        farfield = torch.fft.fft2(psi)
        residual = farfield.abs() - self.diffraction[idx].sqrt()
        dx, dy = self.object.patch_gradients(self.positions[idx], self.probe.shape[-2:])
        return torch.stack([(residual * dx.abs()).mean((-1, -2)), (residual * dy.abs()).mean((-1, -2))], -1)

    def run_epoch(self, epoch):
        step = self.options.position_step_size
        delta = torch.zeros_like(self.positions)
        for batch in torch.split(self.indices_this_rank, self.options.batch_size):
            self.object.update(batch, self.probe, self.diffraction)
            delta[batch] = -step * self.position_gradient(batch)
        # every rank touched only its own positions; combine them before applying
        delta = self.sync_buffer(delta, indices=self.indices_this_rank)
        self.positions += delta
        self.object.data = self.sync_buffer(self.object.data, op=torch.distributed.ReduceOp.AVG)
        return float(delta.norm())

    def run(self):
        for epoch in range(self.options.num_epochs):
            norm = self.run_epoch(epoch)
            if self.rank == 0 and epoch % 10 == 0:
                print(f"epoch {epoch}: position update norm {norm:.3e} "
                      f"(positions per rank {self.chunk_sizes})")
