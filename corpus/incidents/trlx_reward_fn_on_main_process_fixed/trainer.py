"""Safe twin of trlx_reward_fn_on_main_process: the parallel reward model is called on every
process (each takes part in its ZeRO-3 forward), and every process keeps the scores of its own
samples; no scatter is needed.

Thread: https://github.com/CarperAI/trlx/pull/575
"""
import torch


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

        all_str_samples, all_str_prompts, all_str_outputs = self.decode(gathered_prompts, gathered_samples)
        all_scores = torch.tensor(
            self.reward_fn(samples=all_str_samples, prompts=all_str_prompts, outputs=all_str_outputs),
            dtype=torch.float,
            device=device,
        )
        scores = all_scores.reshape(self.accelerator.num_processes, -1)[self.accelerator.process_index]
        return samples, scores
