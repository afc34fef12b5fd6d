"""Trimmed vllm/v1/worker/gpu_model_runner.py: `execute_model` turns a SchedulerOutput into one
forward of the MoE model; with data parallelism the batch size is first agreed across the DP ranks
(`coordinate_batch_across_dp`, an all-reduce over the DP group) and every MoE layer communicates
over the EP group."""
from dataclasses import dataclass, field

import torch

from vllm_lite.distributed.parallel_state import has_kv_transfer_group
from vllm_lite.v1.worker.dp_utils import coordinate_batch_across_dp


@dataclass
class ModelRunnerOutput:
    req_ids: list = field(default_factory=list)
    sampled_token_ids: list = field(default_factory=list)


EMPTY_MODEL_RUNNER_OUTPUT = ModelRunnerOutput()


@dataclass
class CachedRequestState:
    req_id: str
    token_ids: list
    num_computed_tokens: int = 0


class GPUModelRunner:
    def __init__(self, vllm_config, model, device):
        self.vllm_config = vllm_config
        self.parallel_config = vllm_config.parallel_config
        self.model = model
        self.device = device
        self.requests = {}

    def _update_states(self, scheduler_output):
        for req_id in scheduler_output.finished_req_ids:
            self.requests.pop(req_id, None)
        for new_req in scheduler_output.scheduled_new_reqs:
            self.requests[new_req.req_id] = CachedRequestState(new_req.req_id, list(new_req.prompt_token_ids))

    def _prepare_inputs(self, scheduler_output):
        input_ids, positions, logits_indices = [], [], []
        for req_id, n in scheduler_output.num_scheduled_tokens.items():
            state = self.requests[req_id]
            start = state.num_computed_tokens
            input_ids.extend(state.token_ids[start:start + n])
            positions.extend(range(start, start + n))
            logits_indices.append(len(input_ids) - 1)
            state.num_computed_tokens += n
        num_tokens_unpadded = len(input_ids)
        num_tokens_padded, _ = coordinate_batch_across_dp(num_tokens_unpadded, self.parallel_config)
        pad = num_tokens_padded - num_tokens_unpadded
        input_ids = torch.tensor(input_ids + [0] * pad, dtype=torch.long, device=self.device)
        positions = torch.tensor(positions + [0] * pad, dtype=torch.long, device=self.device)
        return input_ids, positions, torch.tensor(logits_indices, device=self.device)

    def kv_connector_no_forward(self, scheduler_output):
        return EMPTY_MODEL_RUNNER_OUTPUT

    @torch.inference_mode()
    def execute_model(self, scheduler_output):
        self._update_states(scheduler_output)
        num_scheduled_tokens = scheduler_output.total_num_scheduled_tokens
        if not num_scheduled_tokens:
            if self.parallel_config.data_parallel_size > 1:
                # num_scheduled_tokens can be 0 on this DP rank while the others run a batch
                # (any executor backend); run a dummy batch so that coordinate_batch_across_dp and
                # the MoE collectives are entered and the DP ranks stay in sync.
                self._dummy_run(1)
            if not has_kv_transfer_group():
                output = EMPTY_MODEL_RUNNER_OUTPUT
            else:
                output = self.kv_connector_no_forward(scheduler_output)
            return output

        input_ids, positions, logits_indices = self._prepare_inputs(scheduler_output)
        hidden_states = self.model(input_ids, positions)
        logits = self.model.compute_logits(hidden_states[logits_indices])
        sampled = logits.argmax(dim=-1).tolist()
        req_ids = list(scheduler_output.num_scheduled_tokens)
        for req_id, tok in zip(req_ids, sampled):
            self.requests[req_id].token_ids.append(tok)
        return ModelRunnerOutput(req_ids=req_ids, sampled_token_ids=[[t] for t in sampled])

    @torch.inference_mode()
    def _dummy_run(self, num_tokens):
        num_tokens_padded, _ = coordinate_batch_across_dp(num_tokens, self.parallel_config)
        input_ids = torch.zeros(num_tokens_padded, dtype=torch.long, device=self.device)
        positions = torch.zeros_like(input_ids)
        return self.model(input_ids, positions)
