"""CTClipTrainer: the accelerate-driven training loop of CT-CLIP (trimmed), with the checkpoint block
of PR #17 (state dict gathered on every rank, written on the main process)."""
from datetime import timedelta
from pathlib import Path

import torch
from accelerate import Accelerator, DistributedDataParallelKwargs
from accelerate.utils import InitProcessGroupKwargs
from torch import nn
from torch.optim import AdamW
from torch.utils.data import DataLoader

from data import CTReportDataset


def exists(val):
    return val is not None


def noop(*args, **kwargs):
    pass


def cycle(dl):
    while True:
        for data in dl:
            yield data


def accum_log(log, new_logs):
    for key, new_value in new_logs.items():
        old_value = log.get(key, 0.0)
        log[key] = old_value + new_value
    return log


class CTClipTrainer(nn.Module):
    def __init__(
        self,
        CTClip,
        *,
        num_train_steps,
        batch_size,
        data_train="train",
        reports_file_train="data_reports.xlsx",
        tokenizer=None,
        lr=1.25e-6,
        wd=0.0,
        max_grad_norm=0.5,
        save_model_every=1000,
        results_folder="./results",
        num_workers=8,
        accelerate_kwargs: dict = dict(),
    ):
        super().__init__()
        ddp_kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)
        kwargs = InitProcessGroupKwargs(timeout=timedelta(seconds=36000))
        self.accelerator = Accelerator(kwargs_handlers=[ddp_kwargs, kwargs], **accelerate_kwargs)
        self.CTClip = CTClip
        self.tokenizer = tokenizer

        self.register_buffer("steps", torch.Tensor([0]))
        self.num_train_steps = num_train_steps
        self.batch_size = batch_size

        self.optim = AdamW(CTClip.parameters(), lr=lr, weight_decay=wd)
        self.max_grad_norm = max_grad_norm
        self.lr = lr

        self.ds = CTReportDataset(data_folder=data_train, csv_file=reports_file_train)
        self.dl = DataLoader(self.ds, num_workers=num_workers, batch_size=self.batch_size, shuffle=True)

        self.dl_iter = cycle(self.dl)
        self.device = self.accelerator.device
        self.CTClip.to(self.device)

        (self.dl_iter, self.CTClip, self.optim) = self.accelerator.prepare(self.dl_iter, self.CTClip, self.optim)

        self.save_model_every = save_model_every
        self.results_folder = Path(results_folder)
        self.results_folder.mkdir(parents=True, exist_ok=True)

    def print(self, msg):
        self.accelerator.print(msg)

    @property
    def is_main(self):
        return self.accelerator.is_main_process

    def train_step(self):
        device = self.device
        steps = int(self.steps.item())

        self.CTClip.train()
        logs = {}

        video, text = next(self.dl_iter)
        video = video.to(device)
        text_tokens = self.tokenizer(
            list(text), return_tensors="pt", padding="max_length", truncation=True, max_length=512
        ).to(device)

        with self.accelerator.autocast():
            loss = self.CTClip(text_tokens, video, return_loss=True, device=device)

        self.accelerator.backward(loss)
        accum_log(logs, {"loss": loss.item()})
        if exists(self.max_grad_norm):
            self.accelerator.clip_grad_norm_(self.CTClip.parameters(), self.max_grad_norm)

        self.optim.step()
        self.optim.zero_grad()
        self.print(f"{steps}: loss: {logs['loss']}")

        # save model every so often: every rank takes part in gathering the FSDP state dict,
        # only the main process writes it
        if not (steps % self.save_model_every):
            state_dict = self.accelerator.get_state_dict(self.CTClip, unwrap=False)
            if self.is_main:
                model_path = str(self.results_folder / f"CTClip.{steps}.pt")
                self.accelerator.save(state_dict, model_path)
                self.print(f"{steps}: saving model to {str(self.results_folder)}")

        self.steps += 1
        return logs

    def train(self, log_fn=noop):
        while self.steps < self.num_train_steps:
            logs = self.train_step()
            log_fn(logs)

        self.print("training complete")
