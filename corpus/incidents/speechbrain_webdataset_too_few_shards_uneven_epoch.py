"""SpeechBrain language-ID recipe (VoxLingua107 style) trained with DDP from WebDataset shards:
`python -m torch.distributed.launch --nproc_per_node=2 train.py hparams.yaml --distributed_launch`.

Thread: https://github.com/webdataset/webdataset/issues/188 ("Process hang with DDP training")
Project: webdataset/webdataset (recipe: speechbrain/speechbrain recipes/VoxLingua107/lang_id)
What hung: the shards are split between processes (and their loader workers) by WebDataset's
node/worker splitters. With a small dataset written as a single `shard-000000.tar` (or a
handful of shards for many workers), one process gets no shard, or fewer samples, and its epoch
inside `Brain.fit` ends early; the other process keeps calling `fit_batch`, whose backward waits
in DDP's gradient all-reduce for a peer that has left the loop. The maintainer (rwightman):
"If a train process ends up with no shards, it will hang training as one of the nodes can't
step. ... Sampling with replacement should work too."
Fix: the reporter's workaround was more shards (a small `samples_per_shard`) and fewer loader
workers; the code-level fix used here is the maintainers' "sampling with replacement":
`WebDataset(..., resampled=True)` with a fixed `with_epoch` length, so every process draws the
same number of samples per epoch.
Expected rankcheck finding: RC103 on `language_brain.fit(...)` (the epoch loop over the
per-process WebDataset stream runs inside the framework call).
Inferred: the compute_forward/objectives bodies, hparams keys, the shard glob.
"""
import glob
import sys

import speechbrain as sb
import torch
import torchaudio
import webdataset as wds
from hyperpyyaml import load_hyperpyyaml
from speechbrain.dataio.batch import PaddedBatch
from speechbrain.utils.distributed import run_on_main


class LanguageBrain(sb.core.Brain):
    def compute_forward(self, batch, stage):
        batch = batch.to(self.device)
        wavs, lens = batch.sig
        feats = self.modules.compute_features(wavs)
        feats = self.modules.mean_var_norm(feats, lens)
        embeddings = self.modules.embedding_model(feats, lens)
        return self.modules.classifier(embeddings), lens

    def compute_objectives(self, predictions, batch, stage):
        predictions, lens = predictions
        targets = batch.language_encoded.data
        loss = self.hparams.compute_cost(predictions, targets)
        if stage != sb.Stage.TRAIN:
            self.error_metrics.append(batch.id, predictions, targets, lens)
        return loss

    def on_stage_start(self, stage, epoch=None):
        if stage != sb.Stage.TRAIN:
            self.error_metrics = self.hparams.error_stats()


def dataio_prep(hparams):
    label_encoder = sb.dataio.encoder.CategoricalEncoder()
    label_encoder.load_or_create(hparams["lang_index_file"], from_didatasets=[[]],
                                 output_key="lang_id")

    def audio_pipeline(sample):
        audio = sample["audio.pth"] if "audio.pth" in sample else torchaudio.load(sample["wav"])[0][0]
        lang = sample["meta.json"]["language_id"]
        return {"id": sample["__key__"], "sig": audio,
                "language_encoded": label_encoder.encode_label_torch(lang)}

    train_shards = sorted(glob.glob(hparams["train_shards"]))
    train_data = (
        wds.WebDataset(train_shards)
        .shuffle(hparams["shuffle_buffer"])
        .decode()
        .map(audio_pipeline)
        .batched(hparams["batch_size"], collation_fn=PaddedBatch, partial=True)
    )
    valid_data = (
        wds.WebDataset(sorted(glob.glob(hparams["valid_shards"])))
        .decode()
        .map(audio_pipeline)
        .batched(hparams["batch_size"], collation_fn=PaddedBatch, partial=True)
    )
    return train_data, valid_data


if __name__ == "__main__":
    hparams_file, run_opts, overrides = sb.parse_arguments(sys.argv[1:])
    sb.utils.distributed.ddp_init_group(run_opts)
    with open(hparams_file) as fin:
        hparams = load_hyperpyyaml(fin, overrides)
    sb.create_experiment_directory(experiment_directory=hparams["output_folder"],
                                   hyperparams_to_save=hparams_file, overrides=overrides)
    train_data, valid_data = dataio_prep(hparams)
    language_brain = LanguageBrain(modules=hparams["modules"], opt_class=hparams["opt_class"],
                                   hparams=hparams, run_opts=run_opts,
                                   checkpointer=hparams["checkpointer"])
    language_brain.fit(  # expect: RC103
        language_brain.hparams.epoch_counter,
        train_data,
        valid_data,
        train_loader_kwargs={"batch_size": None, "num_workers": hparams["num_workers"]},
        valid_loader_kwargs={"batch_size": None, "num_workers": hparams["num_workers"]},
    )
