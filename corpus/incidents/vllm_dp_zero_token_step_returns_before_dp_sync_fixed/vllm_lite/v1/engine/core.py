"""Trimmed vllm/v1/engine/core.py: one engine core per DP rank (multiprocessing or Ray DP
backend). Every iteration of the busy loop runs one forward per DP rank: the scheduled step when
the local scheduler holds requests, a dummy batch otherwise; every 32 steps the ranks all-reduce
whether any of them still has unfinished requests."""
import time
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from vllm_lite.distributed.parallel_state import get_dp_group


@dataclass
class NewRequestData:
    req_id: str
    prompt_token_ids: list


@dataclass
class SchedulerOutput:
    scheduled_new_reqs: list = field(default_factory=list)
    num_scheduled_tokens: dict = field(default_factory=dict)
    total_num_scheduled_tokens: int = 0
    finished_req_ids: set = field(default_factory=set)


class Scheduler:
    """Token-budget scheduler; requests whose KV blocks are still being received (or that wait for
    the previous async step) are skipped, so a step can schedule zero tokens while requests remain."""

    def __init__(self, scheduler_config):
        self.budget = scheduler_config.max_num_batched_tokens
        self.waiting, self.running, self.blocked = [], [], set()
        self.finished = set()

    def add_request(self, req_id, prompt_token_ids):
        self.waiting.append(NewRequestData(req_id, prompt_token_ids))

    def has_requests(self):
        return bool(self.waiting or self.running)

    def has_unfinished_requests(self):
        return self.has_requests()

    def schedule(self):
        out = SchedulerOutput(finished_req_ids=self.finished)
        self.finished = set()
        budget = self.budget
        for req in list(self.waiting):
            if req.req_id in self.blocked or len(req.prompt_token_ids) > budget:
                continue
            self.waiting.remove(req)
            self.running.append(req.req_id)
            out.scheduled_new_reqs.append(req)
            out.num_scheduled_tokens[req.req_id] = len(req.prompt_token_ids)
            budget -= len(req.prompt_token_ids)
        for req_id in self.running:
            if req_id in out.num_scheduled_tokens or req_id in self.blocked or budget <= 0:
                continue
            out.num_scheduled_tokens[req_id] = 1
            budget -= 1
        out.total_num_scheduled_tokens = sum(out.num_scheduled_tokens.values())
        return out

    def update_from_output(self, model_output, max_tokens):
        pass


class DPEngineCoreProc:
    def __init__(self, vllm_config, model_runner, scheduler):
        self.vllm_config = vllm_config
        self.model_runner = model_runner
        self.scheduler = scheduler
        self.engines_running = False
        self.step_counter = 0

    def step_with_batch_queue(self):
        # async scheduling: a scheduled step is dispatched to the runner even when it carries no
        # tokens (e.g. all its requests wait on the previous step), and counts as executed
        if not self.scheduler.has_requests():
            return None, False
        scheduler_output = self.scheduler.schedule()
        model_output = self.model_runner.execute_model(scheduler_output)
        return model_output, True

    def execute_dummy_batch(self):
        self.model_runner._dummy_run(1)

    def _has_global_unfinished_reqs(self, local_unfinished):
        self.step_counter += 1
        if self.step_counter % 32 != 0:
            return True
        flag = torch.tensor([int(local_unfinished)], dtype=torch.int32)
        dist.all_reduce(flag, group=get_dp_group().cpu_group)
        return bool(flag.item())

    def run_busy_loop(self, input_queue):
        while True:
            while not input_queue.empty():
                req_id, prompt = input_queue.get_nowait()
                self.scheduler.add_request(req_id, prompt)
            _, executed = self.step_with_batch_queue()
            if not executed:
                # this rank has nothing to run: keep the DP ranks in step with a dummy forward
                self.execute_dummy_batch()
            local_unfinished = self.scheduler.has_unfinished_requests()
            self.engines_running = self._has_global_unfinished_reqs(local_unfinished)
            if not self.engines_running:
                time.sleep(0.005)
