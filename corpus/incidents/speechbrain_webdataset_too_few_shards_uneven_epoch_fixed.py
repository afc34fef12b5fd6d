"""Safe twin of speechbrain_webdataset_too_few_shards_uneven_epoch.py: the training stream
samples shards with replacement (`resampled=True`) and every process takes the same fixed number
of samples per epoch (`with_epoch`), so no process runs out of data before the others.

Thread: https://github.com/webdataset/webdataset/issues/188
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
    world_size = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    samples_per_rank = hparams["epoch_samples"] // world_size
    train_data = (
        wds.WebDataset(train_shards, resampled=True)
        .shuffle(hparams["shuffle_buffer"])
        .decode()
        .map(audio_pipeline)
        .batched(hparams["batch_size"], collation_fn=PaddedBatch, partial=False)
        .with_epoch(samples_per_rank // hparams["batch_size"])
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
    language_brain.fit(
        language_brain.hparams.epoch_counter,
        train_data,
        valid_data,
        train_loader_kwargs={"batch_size": None, "num_workers": hparams["num_workers"]},
        valid_loader_kwargs={"batch_size": None, "num_workers": hparams["num_workers"]},
    )
