"""PPO fine-tuning of GPT-2 (imdb) to write positive reviews, rewarded by a sentiment classifier,
with trl's PPOTrainer and KL early stopping (`early_stopping=True, target_kl=0.1`), launched on
several GPUs with `accelerate launch --multi_gpu --num_processes 2 gpt2_sentiment.py` (trl's
examples/sentiment/scripts/gpt2-sentiment.py), after trl#254: the early-stopping decision is taken
on the policy KL averaged over all processes.

Thread: https://github.com/huggingface/trl/pull/254 ("[`distributed`] Fix early stopping and DP",
merged)
Project: huggingface/trl (trl/trainer/ppo_trainer.py, `PPOTrainer.step` and `_early_stop`)
Fix (the PR, merged): `_early_stop` all-reduces `policykl` and averages it over the processes
before the test, so every process takes the same decision and breaks on the same mini-batch.
Expected rankcheck finding: none (safe twin).
(Trimmed: the reward and the generation settings follow the example; the trainer keeps only the
decoder-only path. Inferred: the author's reproduction forced the stop with a zero coefficient;
the hang is reached here with the example's own settings when the KL of one process crosses the
threshold first.)
"""
import torch
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoTokenizer, pipeline
from trl import AutoModelForCausalLMWithValueHead, create_reference_model
from trl.core import LengthSampler

from trl_lite import PPOConfig, PPOTrainer

config = PPOConfig(
    model_name="lvwerra/gpt2-imdb",
    learning_rate=1.41e-5,
    log_with="wandb",
    mini_batch_size=16,
    batch_size=256,
    early_stopping=True,
    target_kl=0.1,
)
sent_kwargs = {"return_all_scores": True, "function_to_apply": "none", "batch_size": 16}


def build_dataset(config, dataset_name="imdb", input_min_text_length=2, input_max_text_length=8):
    tokenizer = AutoTokenizer.from_pretrained(config.model_name)
    tokenizer.pad_token = tokenizer.eos_token
    ds = load_dataset(dataset_name, split="train")
    ds = ds.rename_columns({"text": "review"})
    ds = ds.filter(lambda x: len(x["review"]) > 200, batched=False)
    input_size = LengthSampler(input_min_text_length, input_max_text_length)

    def tokenize(sample):
        sample["input_ids"] = tokenizer.encode(sample["review"])[: input_size()]
        sample["query"] = tokenizer.decode(sample["input_ids"])
        return sample

    ds = ds.map(tokenize, batched=False)
    ds.set_format(type="torch")
    return ds


def collator(data):
    return dict((key, [d[key] for d in data]) for key in data[0])


dataset = build_dataset(config)
model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
ref_model = create_reference_model(model)
tokenizer = AutoTokenizer.from_pretrained(config.model_name)
tokenizer.pad_token = tokenizer.eos_token

ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collator)
device = ppo_trainer.accelerator.device
sentiment_pipe = pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb", device=device)

gen_kwargs = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True,
              "pad_token_id": tokenizer.eos_token_id}
output_length_sampler = LengthSampler(4, 16)

for epoch, batch in tqdm(enumerate(ppo_trainer.dataloader)):
    query_tensors = batch["input_ids"]

    # Get response from gpt2
    response_tensors = []
    policy = ppo_trainer.accelerator.unwrap_model(ppo_trainer.model)
    for query in query_tensors:
        gen_len = output_length_sampler()
        gen_kwargs["max_new_tokens"] = gen_len
        response = policy.generate(query.unsqueeze(dim=0).to(device), **gen_kwargs)
        response_tensors.append(response.squeeze()[-gen_len:])
    batch["response"] = [tokenizer.decode(r.squeeze()) for r in response_tensors]

    # Compute sentiment score
    texts = [q + r for q, r in zip(batch["query"], batch["response"])]
    pipe_outputs = sentiment_pipe(texts, **sent_kwargs)
    rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]

    # Run PPO step
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    if ppo_trainer.accelerator.is_main_process:
        print(f"epoch {epoch}: kl {float(stats['objective/kl']):.3f}")
