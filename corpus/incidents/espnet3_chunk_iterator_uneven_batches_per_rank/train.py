"""ESPnet3 training of a speech-enhancement model with espnet2's ChunkIterFactory (fixed-length
chunks cut from each utterance), on four GPUs under Lightning DDP
(`python train.py --config conf/train_chunk.yaml`, `num_device: 4`).

Thread: https://github.com/espnet/espnet/pull/6517 ("[espnet3] Add BaseIterator with DDP epoch-end
sync for dataloaders", merged)
Project: espnet/espnet (espnet3/components/data/dataloader.py, espnet2's ChunkIterFactory,
ESPnet3's LightningModule)
What hung: the PR: "Iter factories like espnet2's ChunkIterFactory emit a data-dependent number of
batches per rank, so under DDP each rank ends its epoch at a different step. Lightning then moves
the exhausted rank into validation while the others are still training, and the two sides issue
mismatched collectives that deadlock until the NCCL watchdog kills the job" (first met in the
LibriTTS codec recipe, espnet#6497: "a rank that receives longer audio splits it into more
chunks"). DataLoaderBuilder gives every rank the same number of utterances (tail batches dropped,
then `batches[rank::world_size]`), but each utterance yields `(L - W) // S + 1` chunks, so the
ranks' epochs differ in length; every training step issues the NaN-skip barrier and all-gather (and
DDP's gradient all-reduce), and the rank that runs out first meets them with validation's.
Fix (the PR, merged): the builder wraps each epoch's iterator in a `BaseIterator` that all-reduces
a one-element has-next flag with MIN before every batch, so all ranks end the epoch at the same
batch index.
Expected rankcheck finding: RC103 on the calls in `_step` (espnet3_lite/lightning_module.py) that
issue per-batch collectives, run by Lightning's loops once per batch of an iterator whose length
differs per rank: the NaN-skip check (barrier and all-gather, training and validation) and the
`log_dict` that syncs the validation statistics (`sync_dist` in validation).
(Inferred: the model and the config, a waveform enhancement model with a negative SI-SNR loss
trained with `iterator_type: chunk`, stand in for the codec recipe of espnet#6497; the recipe's
GAN trainer is not reproduced.)
"""
import argparse

import lightning
import torch
import torch.nn as nn
from omegaconf import OmegaConf

from espnet3_lite.lightning_module import ESPnetLightningModule


class ConvEnhancer(nn.Module):
    """Time-domain masking enhancer returning (loss, stats, weight) as espnet2 models do."""

    def __init__(self, channels: int = 256, kernel_size: int = 16):
        super().__init__()
        self.encoder = nn.Conv1d(1, channels, kernel_size, stride=kernel_size // 2)
        self.separator = nn.Sequential(nn.Conv1d(channels, channels, 3, padding=1), nn.PReLU(),
                                       nn.Conv1d(channels, channels, 1), nn.Sigmoid())
        self.decoder = nn.ConvTranspose1d(channels, 1, kernel_size, stride=kernel_size // 2)

    def forward(self, speech_mix, speech_ref, speech_mix_lengths=None, speech_ref_lengths=None):
        feats = self.encoder(speech_mix.unsqueeze(1))
        est = self.decoder(feats * self.separator(feats)).squeeze(1)[:, : speech_ref.size(1)]
        ref = speech_ref - speech_ref.mean(-1, keepdim=True)
        est = est - est.mean(-1, keepdim=True)
        proj = (est * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + 1e-8)
        si_snr = 10 * torch.log10(proj.pow(2).sum(-1) / ((est - proj).pow(2).sum(-1) + 1e-8) + 1e-8)
        loss = -si_snr.mean()
        return loss, {"loss": loss.detach(), "si_snr": si_snr.mean().detach()}, torch.tensor(
            speech_mix.size(0), device=loss.device)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="conf/train_chunk.yaml")
    args = parser.parse_args()
    config = OmegaConf.load(args.config)

    lightning.seed_everything(config.seed)
    model = ConvEnhancer(**config.model)
    module = ESPnetLightningModule(model, config)
    trainer = lightning.Trainer(
        accelerator="gpu",
        devices=config.num_device,
        strategy="ddp",
        max_epochs=config.max_epochs,
        gradient_clip_val=config.grad_clip,
        # the espnet2 iterators shard by rank themselves and are rebuilt every epoch
        use_distributed_sampler=False,
        reload_dataloaders_every_n_epochs=1,
        default_root_dir=config.exp_dir,
    )
    trainer.fit(module)


if __name__ == "__main__":
    main()
