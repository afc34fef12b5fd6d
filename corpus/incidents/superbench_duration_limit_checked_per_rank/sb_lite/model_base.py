"""Model-benchmark base class (superbench/benchmarks/model_benchmarks/model_base.py, trimmed)."""

import argparse
import enum
import logging
import math
import statistics
import time
from abc import abstractmethod

logger = logging.getLogger("superbench")


class Precision(enum.Enum):
    FLOAT32 = "float32"
    FLOAT16 = "float16"


class ModelAction(enum.Enum):
    TRAIN = "train"
    INFERENCE = "inference"


class DistributedImpl(enum.Enum):
    DDP = "ddp"


class DistributedBackend(enum.Enum):
    NCCL = "nccl"
    GLOO = "gloo"


class Optimizer(enum.Enum):
    SGD = "sgd"
    ADAM = "adam"
    ADAMW = "adamw"


class ModelBenchmark:
    """The base class of E2E model benchmarks."""

    def __init__(self, name, parameters=""):
        self._name = name
        self._parameters = parameters.split()
        self._parser = argparse.ArgumentParser(prog=name)
        self._args = None
        self._curr_run_index = 0
        self._world_size = 1
        self._local_rank = None
        self._global_rank = None
        self._dataset = None
        self._dataloader = None
        self._model = None
        self._optimizer_type = None
        self._optimizer = None
        self._loss_fn = None
        self._target = None
        self._supported_precision = []
        self._gpu_available = None
        self._sub_benchmark_start_time = 0.0
        self._raw_result = {}

    def add_parser_arguments(self):
        self._parser.add_argument("--run_count", type=int, default=1)
        self._parser.add_argument("--duration", type=int, default=0,
                                  help="The elapsed time of benchmark in seconds (0: no limit).")
        self._parser.add_argument("--num_warmup", type=int, default=64, help="The number of warmup step.")
        self._parser.add_argument("--num_steps", type=int, default=2048, help="The number of test step.")
        self._parser.add_argument("--sample_count", type=int, default=1024, help="The number of data samples.")
        self._parser.add_argument("--batch_size", type=int, default=32)
        self._parser.add_argument("--precision", type=Precision, nargs="+", default=[Precision.FLOAT32])
        self._parser.add_argument("--model_action", type=ModelAction, nargs="+", default=[ModelAction.TRAIN])
        self._parser.add_argument("--distributed_impl", type=DistributedImpl, default=None)
        self._parser.add_argument("--distributed_backend", type=DistributedBackend, default=None)
        self._parser.add_argument("--no_gpu", action="store_true")
        self._parser.add_argument("--pin_memory", action="store_true")
        self._parser.add_argument("--force_fp32", action="store_true")

    def parse_args(self):
        self.add_parser_arguments()
        self._args = self._parser.parse_args(self._parameters)
        return True

    @abstractmethod
    def _judge_gpu_availability(self):
        pass

    @abstractmethod
    def _init_distributed_setting(self):
        pass

    @abstractmethod
    def _generate_dataset(self):
        pass

    @abstractmethod
    def _init_dataloader(self):
        pass

    @abstractmethod
    def _create_model(self, precision):
        pass

    @abstractmethod
    def _create_optimizer(self):
        pass

    @abstractmethod
    def _train_step(self, precision):
        pass

    def _preprocess(self):
        if not self.parse_args():
            return False
        self._judge_gpu_availability()
        if not self._init_distributed_setting():
            return False
        # Set sample_count aligned with batch_size.
        self._args.sample_count = math.ceil(self._args.sample_count / self._args.batch_size) * self._args.batch_size
        if not self._generate_dataset():
            return False
        return self._init_dataloader()

    def __train(self, precision):
        if not self._create_model(precision):
            return False
        if not self._create_optimizer():
            return False
        # The unit of step time is millisecond.
        step_times = self._train_step(precision)
        step_times = self._process_model_result(ModelAction.TRAIN, precision, step_times)
        if not step_times:
            return False
        logger.info(
            "Average train time - round: %d, model: %s, precision: %s, step time: %.6f ms.",
            self._curr_run_index, self._name, precision, statistics.mean(step_times),
        )
        return True

    def _benchmark(self):
        for precision in self._args.precision:
            for model_action in self._args.model_action:
                self._sub_benchmark_start_time = time.time()
                if model_action == ModelAction.TRAIN:
                    if not self.__train(precision):
                        return False
                else:
                    logger.warning("Model action has no implementation here - model: %s, action: %s",
                                   self._name, model_action)
        return True

    def _is_finished(self, curr_step, curr_time):
        """Judge whether the benchmarking should be stopped early or not.

        Args:
            curr_step (int): the current benchmarking step.
            curr_time (float): the current time in seconds got from time.time().
        """
        total_steps = self._args.num_warmup + self._args.num_steps

        if (
            (self._args.duration > 0 and (curr_time - self._sub_benchmark_start_time) >= self._args.duration)
            or (total_steps > 0 and curr_step >= total_steps)
        ):
            return True

        return False

    def _sync_result(self, result):
        return result

    def _process_model_result(self, model_action, precision, step_times):
        if len(step_times) == 0:
            logger.error("Step time list is empty - model: %s, action: %s.", self._name, model_action)
            return None
        step_times = self._sync_result(step_times)
        if not step_times:
            return None
        metric = "{}_{}_step_time".format(precision.value, model_action.value)
        self._raw_result.setdefault(metric, []).append(step_times)
        return step_times

    def _postprocess(self):
        return True

    def run(self):
        ok = self._preprocess()
        if ok:
            for self._curr_run_index in range(self._args.run_count):
                if not self._benchmark():
                    ok = False
                    break
        return self._postprocess() and ok
