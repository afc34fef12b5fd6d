"""wav2vec 2.0 pre-training with the fairseq model code and fairscale's FullyShardedDataParallel
(`--ddp-backend fully_sharded`), every Transformer encoder layer its own FSDP unit, with encoder
LayerDrop (`--encoder-layerdrop 0.05`), launched with torchrun.

Thread: https://github.com/facebookresearch/fairscale/issues/796 ("layerdrop would cause model
training to hang when used with fsdp backend"; filed the same day as fairseq#3875)
Project: facebookresearch/fairscale with facebookresearch/fairseq (models/wav2vec/wav2vec2.py)
What hung: "If you try train a model with fully_sharded backend and use layer drop, the model
training will hang. Each individual layer was also wrapped with fsdp". LayerDrop decides per layer
with `np.random.random()` whether to run it; numpy's global RNG has advanced differently on each
rank (the span masking of `compute_mask_indices` draws a number of values that depends on this
rank's batch lengths), so ranks drop different layers. A kept layer's FSDP forward all-gathers its
parameters (and its backward reduce-scatters the gradients) while a rank that dropped it skips
those collectives and goes on to the next layer's -- the ranks pair different all-gathers and
hang. The maintainer (min-xu-ai): "This may not be easy to detect in FSDP."
Fix (the reporter's workaround, posted in both threads): always run the layer and keep its output
only if it was not dropped ("mul_factor"), so every rank issues every layer's all-gather; the
layer-skipping branch no longer guards the call.
Expected rankcheck finding: RC101 on the `x, z = layer(...)` call under `if not self.training or
(dropout_probability > self.layerdrop):` in TransformerEncoder.extract_features
(fairseq_lite/models/wav2vec/wav2vec2.py): an FSDP unit's forward reached only on ranks whose
numpy draw kept the layer.
Inferred: the manifest dataset, collater and trainer loop are reduced from fairseq's; the model
keeps the structure of fairseq's wav2vec 2.0 encoder.
"""
import argparse
import os

import numpy as np
import soundfile as sf
import torch
import torch.distributed as dist
from fairscale.nn.data_parallel import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from fairseq_lite.distributed import fsdp_enable_wrap
from fairseq_lite.models.wav2vec.wav2vec2 import Wav2Vec2Model, contrastive_loss


class FileAudioDataset(Dataset):
    def __init__(self, manifest, max_sample_size=250000, min_sample_size=32000):
        with open(manifest) as f:
            self.root = f.readline().strip()
            self.entries = []
            for line in f:
                path, n = line.strip().split("\t")
                if int(n) >= min_sample_size:
                    self.entries.append((path, int(n)))
        self.max_sample_size = max_sample_size

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        wav, _ = sf.read(os.path.join(self.root, self.entries[i][0]), dtype="float32")
        wav = torch.from_numpy(wav)
        if wav.numel() > self.max_sample_size:
            start = torch.randint(0, wav.numel() - self.max_sample_size + 1, ()).item()
            wav = wav[start:start + self.max_sample_size]
        return (wav - wav.mean()) / (wav.std() + 1e-5)


def collate(samples):
    longest = max(s.numel() for s in samples)
    source = torch.zeros(len(samples), longest)
    padding_mask = torch.ones(len(samples), longest, dtype=torch.bool)
    for i, s in enumerate(samples):
        source[i, : s.numel()] = s
        padding_mask[i, : s.numel()] = False
    return {"source": source, "padding_mask": padding_mask}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train_manifest", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--max_update", type=int, default=400000)
    p.add_argument("--encoder_layers", type=int, default=12)
    p.add_argument("--encoder_embed_dim", type=int, default=768)
    p.add_argument("--encoder_ffn_embed_dim", type=int, default=3072)
    p.add_argument("--encoder_attention_heads", type=int, default=12)
    p.add_argument("--encoder_layerdrop", type=float, default=0.05)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--mask_prob", type=float, default=0.65)
    p.add_argument("--mask_length", type=int, default=10)
    p.add_argument("--final_dim", type=int, default=256)
    p.add_argument("--num_negatives", type=int, default=100)
    p.add_argument("--logit_temp", type=float, default=0.1)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--cpu_offload", action="store_true")
    p.add_argument("--no_reshard_after_forward", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    # same seed everywhere, as fairseq does; the ranks' numpy streams part ways at the first mask
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    with fsdp_enable_wrap(args):
        model = Wav2Vec2Model(args)
    model = FSDP(model.cuda(), mixed_precision=args.fp16, flatten_parameters=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)

    dataset = FileAudioDataset(args.train_manifest)
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate, num_workers=6)

    num_updates, epoch = 0, 0
    while num_updates < args.max_update:
        sampler.set_epoch(epoch)
        model.train()
        for batch in loader:
            net_output = model(batch["source"].cuda(), padding_mask=batch["padding_mask"].cuda())
            loss = contrastive_loss(net_output)
            sample_size = torch.tensor(float(net_output["num_masked"] * batch["source"].size(0)), device="cuda")
            optimizer.zero_grad()
            loss.backward()
            dist.all_reduce(sample_size)
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.mul_(dist.get_world_size() / sample_size)
            model.clip_grad_norm_(10.0)
            optimizer.step()
            num_updates += 1
            if dist.get_rank() == 0 and num_updates % 200 == 0:
                print(f"update {num_updates}: loss {loss.item() / max(sample_size.item(), 1):.3f}")
            if num_updates >= args.max_update:
                break
        epoch += 1


if __name__ == "__main__":
    main()
