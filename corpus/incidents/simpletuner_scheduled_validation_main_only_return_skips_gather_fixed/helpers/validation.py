"""Validation: render the configured validation prompts with the current weights.

Safe twin of simpletuner_scheduled_validation_main_only_return_skips_gather: the schedule check only
narrows to the main process when validation is not batch-parallel (the fix of
bghira/SimpleTuner#2109), so on a scheduled step every rank renders its share of the prompts and
enters the all-gather.
"""
import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import torch
from diffusers import DiffusionPipeline

from .multi_process import gather_across_processes, split_across_processes

logger = logging.getLogger("SimpleTuner")


@dataclass
class _ValidationWorkItem:
    index: int
    shortname: str
    prompt: str


class Validation:
    def __init__(self, accelerator, config, model, validation_prompt_metadata, deepspeed=False):
        self.accelerator = accelerator
        self.config = config
        self.model = model
        self.validation_prompt_metadata = validation_prompt_metadata
        self.deepspeed = deepspeed
        self.global_step = 0
        self.global_resume_step = 0
        self.pipeline = None
        self.validation_images: Optional[Dict[str, Any]] = None
        self.validation_prompt_dict: Dict[str, str] = {}

    def _update_state(self, global_step):
        self.global_step = global_step

    def _validation_multigpu_mode(self) -> str:
        mode = str(getattr(self.config, "validation_multigpu", "batch-parallel")).strip().lower()
        if mode not in {"single-gpu", "batch-parallel"}:
            mode = "single-gpu"
        if getattr(self.accelerator, "num_processes", 1) <= 1:
            return "single-gpu"
        return mode

    def _use_distributed_validation(self) -> bool:
        return self._validation_multigpu_mode() == "batch-parallel"

    def would_validate(self, step=0):
        return self.should_perform_intermediary_validation(
            step, self.validation_prompt_metadata.get("validation_prompts"), "intermediary"
        )

    def should_perform_intermediary_validation(self, step, validation_prompts, validation_type):
        if not validation_prompts:
            return False
        step_interval = getattr(self.config, "validation_step_interval", None)
        try:
            step_interval = int(step_interval) if step_interval is not None else None
        except (TypeError, ValueError):
            step_interval = None

        should_do_step_validation = False
        if step_interval and self.global_step > self.global_resume_step:
            should_do_step_validation = self.global_step % step_interval == 0 and (
                step % self.config.gradient_accumulation_steps == 0
            )

        should_validate = should_do_step_validation
        if not (self.deepspeed or self._use_distributed_validation()):
            should_validate = should_validate and self.accelerator.is_main_process
        return bool(should_validate)

    def run_validations(self, step: int = 0, global_step: int = 0, validation_type="intermediary", force_evaluation: bool = False):
        self._update_state(global_step)
        if self.validation_prompt_metadata is None:
            return self
        content = self.validation_prompt_metadata.get("validation_prompts", None)
        has_validation_prompts = content is not None and len(content) > 0
        current_step_aligns_with_interval = self.should_perform_intermediary_validation(step, content, validation_type)
        current_validation_will_execute = has_validation_prompts and current_step_aligns_with_interval
        logger.debug(f"Should evaluate: {current_validation_will_execute}, force evaluation: {force_evaluation}")
        if (not current_validation_will_execute and not force_evaluation) or not has_validation_prompts:
            return self

        should_execute_locally = self.accelerator.is_main_process or self.deepspeed or self._use_distributed_validation()
        if should_execute_locally:
            try:
                self.setup_pipeline()
                images: Dict[str, Any] = {}
                self.validation_prompt_dict = {}
                self.process_prompts(content, image_accumulator=images)
                self.validation_images = images
            finally:
                self.clean_pipeline()
        return self

    def setup_pipeline(self):
        unet = self.accelerator.unwrap_model(self.model)
        self.pipeline = DiffusionPipeline.from_pretrained(
            self.config.pretrained_model_name_or_path, unet=unet, torch_dtype=torch.bfloat16
        ).to(self.accelerator.device)
        self.pipeline.set_progress_bar_config(disable=True)

    def clean_pipeline(self):
        self.pipeline = None
        torch.cuda.empty_cache()

    def _prepare_work_items(self, content) -> List[_ValidationWorkItem]:
        shortnames = self.validation_prompt_metadata.get("validation_shortnames") or [f"prompt_{i}" for i in range(len(content))]
        return [_ValidationWorkItem(i, name, prompt) for i, (name, prompt) in enumerate(zip(shortnames, content))]

    def _execute_work_item(self, item: _ValidationWorkItem) -> Dict[str, Any]:
        generator = torch.Generator(device=self.accelerator.device).manual_seed(self.config.validation_seed + item.index)
        image = self.pipeline(
            prompt=item.prompt,
            num_inference_steps=self.config.validation_num_inference_steps,
            guidance_scale=self.config.validation_guidance,
            generator=generator,
        ).images[0]
        return {"index": item.index, "shortname": item.shortname, "prompt": item.prompt, "image": image}

    def process_prompts(self, content, image_accumulator):
        work_items = self._prepare_work_items(content)
        use_distributed = self._use_distributed_validation()
        local_items = split_across_processes(self.accelerator, work_items) if use_distributed else work_items
        local_payloads = [self._execute_work_item(item) for item in local_items]

        if use_distributed:
            gathered = gather_across_processes(local_payloads)
            if not self.accelerator.is_main_process:
                return
            payloads = sorted((p for worker in gathered for p in worker), key=lambda p: p["index"])
        else:
            payloads = local_payloads
        for payload in payloads:
            self.validation_prompt_dict[payload["shortname"]] = payload["prompt"]
            image_accumulator.setdefault(payload["shortname"], []).append(payload["image"])
