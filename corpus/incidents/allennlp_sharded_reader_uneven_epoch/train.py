"""`allennlp train` in distributed mode (trimmed): the vocabulary is built once from every shard,
then one worker per GPU is spawned; each worker reads its share of the sharded training and
validation data and trains a simple tagger with the distributed `Trainer`.

Part of the reconstruction of https://github.com/allenai/allennlp/pull/3781; see trainer.py for
the incident description. The shapes follow the PR's test (`test_train_model_distributed_with_
sharded_reader`: a sharded sequence-tagging reader over three shard files, two GPUs).
"""
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from allennlp.data import Vocabulary
from allennlp.data.dataset_readers import SequenceTaggingDatasetReader
from allennlp.data.iterators import BasicIterator
from allennlp.models import SimpleTagger
from allennlp.modules.seq2seq_encoders import PytorchSeq2SeqWrapper
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding

from sharded_dataset_reader import ShardedDatasetReader
from trainer import Trainer

logger = logging.getLogger(__name__)


def build_model(vocab: Vocabulary) -> SimpleTagger:
    embedder = BasicTextFieldEmbedder({"tokens": Embedding(num_embeddings=vocab.get_vocab_size("tokens"), embedding_dim=5)})
    encoder = PytorchSeq2SeqWrapper(torch.nn.LSTM(5, 7, num_layers=2, batch_first=True))
    return SimpleTagger(vocab=vocab, text_field_embedder=embedder, encoder=encoder)


def _train_worker(process_rank: int, args: argparse.Namespace, world_size: int, distributed_device_ids) -> None:
    distributed = world_size > 1
    master = process_rank == 0
    if distributed:
        gpu_id = distributed_device_ids[process_rank]
        torch.cuda.set_device(gpu_id)
        dist.init_process_group(
            backend="nccl",
            init_method=f"tcp://{args.master_addr}:{args.master_port}",
            world_size=world_size,
            rank=process_rank,
        )
    else:
        gpu_id = distributed_device_ids[0] if distributed_device_ids else -1

    # The reader is built after the process group, so it knows its rank and world size.
    reader = ShardedDatasetReader(base_reader=SequenceTaggingDatasetReader(), lazy=True)
    train_data = reader.read(args.train_data_path)
    validation_data = reader.read(args.validation_data_path)

    vocab = Vocabulary.from_files(os.path.join(args.serialization_dir, "vocabulary"))
    model = build_model(vocab)
    if gpu_id >= 0:
        model = model.cuda(gpu_id)
    iterator = BasicIterator(batch_size=args.batch_size)
    iterator.index_with(vocab)
    optimizer = torch.optim.Adam(model.parameters())

    trainer = Trainer(
        model=model,
        optimizer=optimizer,
        iterator=iterator,
        train_dataset=train_data,
        validation_dataset=validation_data,
        num_epochs=args.num_epochs,
        cuda_device=gpu_id,
        distributed=distributed,
        rank=process_rank,
        world_size=world_size,
    )
    metrics = trainer.train()
    if master:
        logger.info("Finished training: %s", metrics)
        torch.save(model.state_dict(), os.path.join(args.serialization_dir, "best.th"))


def train_model(args: argparse.Namespace) -> None:
    os.makedirs(args.serialization_dir, exist_ok=True)
    # The vocabulary is built once, in the parent, from all shards (a non-distributed read).
    full_reader = ShardedDatasetReader(base_reader=SequenceTaggingDatasetReader(), lazy=False)
    instances = list(full_reader.read(args.train_data_path)) + list(full_reader.read(args.validation_data_path))
    Vocabulary.from_instances(instances).save_to_files(os.path.join(args.serialization_dir, "vocabulary"))

    device_ids = [int(d) for d in args.cuda_devices.split(",")]
    world_size = len(device_ids)
    if world_size > 1:
        mp.spawn(_train_worker, args=(args, world_size, device_ids), nprocs=world_size)
    else:
        _train_worker(0, args, 1, device_ids)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_data_path", default="fixtures/data/shards/*")
    parser.add_argument("--validation_data_path", default="fixtures/data/shards/*")
    parser.add_argument("--serialization_dir", default="out/test_distributed_train")
    parser.add_argument("--cuda_devices", default="0,1")
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--num_epochs", type=int, default=2)
    parser.add_argument("--master_addr", default="127.0.0.1")
    parser.add_argument("--master_port", type=int, default=29500)
    train_model(parser.parse_args())
