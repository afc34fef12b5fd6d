"""PPO rollout collection of a trlx AccelerateRLTrainer-style trainer: samples are gathered to the
main process, scored there with `reward_fn`, and the scores are scattered back.

Thread: https://github.com/CarperAI/trlx/pull/575 ("support parallel reward function")
Project: CarperAI/trlx
What hung: "Currently, reward_fn is invoked only in main_process, which will hang if the reward_fn
is actually a parallel model (like: TP/PP/Zero optimized one)." A ZeRO-3 reward model's forward
all-gathers its parameters from every process, but only the main process called it; the others
were already waiting in the `scatter` of the scores.
Fix (the PR): invoke the reward function on every process when it is a parallel model, and let
every process pick its own scores.
Expected rankcheck finding: RC101 on the `self.reward_fn(...)` call under `is_main_process`, which
reaches the DeepSpeed engine's forward.
"""
import torch
import torch.distributed as dist


class AccelerateRLTrainer:
    def __init__(self, accelerator, model, tokenizer, reward_fn, config):
        self.accelerator = accelerator
        self.model = model
        self.tokenizer = tokenizer
        self.reward_fn = reward_fn
        self.config = config

    def decode(self, prompts, samples):
        str_prompts = self.tokenizer.batch_decode(prompts, skip_special_tokens=True)
        str_samples = self.tokenizer.batch_decode(samples, skip_special_tokens=True)
        str_outputs = [s[len(p):] for p, s in zip(str_prompts, str_samples)]
        return str_samples, str_prompts, str_outputs

    def make_experience(self, batch):
        device = self.accelerator.device
        samples = self.accelerator.unwrap_model(self.model).generate(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], **self.config.gen_kwargs
        )
        prompt_tensors = self.accelerator.pad_across_processes(batch["input_ids"], dim=1, pad_index=self.tokenizer.eos_token_id)
        padded_samples = self.accelerator.pad_across_processes(samples, dim=1, pad_index=self.tokenizer.eos_token_id)
        gathered_prompts = self.accelerator.gather(prompt_tensors)
        gathered_samples = self.accelerator.gather(padded_samples)

        if self.accelerator.is_main_process:
            all_str_samples, all_str_prompts, all_str_outputs = self.decode(gathered_prompts, gathered_samples)
            all_scores = torch.tensor(
                self.reward_fn(samples=all_str_samples, prompts=all_str_prompts, outputs=all_str_outputs),  # expect: RC101
                dtype=torch.float,
                device=device,
            )
            all_scores = list(all_scores.reshape(self.accelerator.num_processes, -1).unbind())
        else:
            all_scores = None

        scores = torch.empty(len(samples), device=device)
        dist.scatter(scores, all_scores, src=0)
        return samples, scores
