"""Small process helpers shared by the VLMEvalKit entry points (rank read from torchrun's env)."""
import logging
import os


def get_rank_and_world_size():
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    return rank, world_size


def get_logger(name):
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(name)s %(levelname)s: %(message)s")
    return logging.getLogger(name)


def dump(obj, path):
    import pickle

    with open(path, "wb") as f:
        pickle.dump(obj, f)


def load(path):
    import pickle

    with open(path, "rb") as f:
        return pickle.load(f)
