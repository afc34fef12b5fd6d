"""Ray roles: every model group is a set of Ray actors forming its own torch.distributed world.
The actor group drives training; each actor worker is paired round-robin with a critic, a reference
and a reward worker."""
import math
import os
import socket

import ray
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, get_scheduler

from .experience import masked_log_probs
from .ppo_trainer import ActorPPOTrainer
from .strategy import DeepspeedStrategy


class Actor(nn.Module):
    def __init__(self, pretrain):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(pretrain, torch_dtype=torch.bfloat16)

    @torch.no_grad()
    def generate(self, input_ids, attention_mask, **kwargs):
        sequences = self.model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        pad_id, eos_id = kwargs["pad_token_id"], kwargs["eos_token_id"]
        attention_mask = (sequences.ne(pad_id) & sequences.ne(eos_id)).long()
        action_mask = attention_mask[:, input_ids.size(1):].bool()
        return sequences, attention_mask, action_mask

    def forward(self, sequences, num_actions, attention_mask):
        logits = self.model(sequences, attention_mask=attention_mask).logits
        log_probs = masked_log_probs(logits[:, :-1, :], sequences[:, 1:])
        return log_probs[:, -num_actions:]


class BasePPORole:
    def __init__(self, world_size, rank, local_rank, master_addr, master_port):
        os.environ["MASTER_ADDR"] = master_addr or socket.gethostbyname(socket.gethostname())
        os.environ["MASTER_PORT"] = str(master_port)
        os.environ["WORLD_SIZE"] = str(world_size)
        os.environ["RANK"] = str(rank)
        os.environ["LOCAL_RANK"] = str(local_rank)

    def setup(self, args):
        self.args = args
        self.strategy = DeepspeedStrategy(args, zero_stage=args.zero_stage)
        self.strategy.setup_distributed()


@ray.remote(num_gpus=1)
class ActorModelRayActor(BasePPORole):
    def init_model_from_pretrained(self, args):
        self.setup(args)
        self.tokenizer = AutoTokenizer.from_pretrained(args.pretrain, padding_side="left")
        self.tokenizer.pad_token = self.tokenizer.pad_token or self.tokenizer.eos_token
        prompts = [line.strip() for line in open(args.prompt_data) if line.strip()]
        sampler = DistributedSampler(prompts, shuffle=True, seed=args.seed)
        self.prompts_dataloader = DataLoader(prompts, batch_size=args.micro_rollout_batch_size,
                                             sampler=sampler, drop_last=True)

        actor = Actor(args.pretrain)
        optim = torch.optim.AdamW(actor.parameters(), lr=args.actor_learning_rate, betas=(0.9, 0.95))
        steps = math.ceil(args.num_episodes * len(self.prompts_dataloader) * args.max_epochs)
        scheduler = get_scheduler("cosine", optim, num_warmup_steps=math.ceil(0.03 * steps), num_training_steps=steps)
        self.actor, self.actor_optim, self.actor_scheduler = self.strategy.prepare(
            actor, optim, scheduler, args.micro_train_batch_size)

    def fit(self, critic_model, initial_model, reward_models, critic_train_remote=False):
        args = self.args
        trainer = ActorPPOTrainer(
            self.strategy, self.actor, critic_model, reward_models, initial_model,
            self.actor_optim, self.actor_scheduler, self.tokenizer,
            micro_train_batch_size=args.micro_train_batch_size, max_epochs=args.max_epochs,
            eps_clip=args.eps_clip, prompt_max_len=args.prompt_max_len,
            generate_kwargs=dict(do_sample=True, max_new_tokens=args.generate_max_len, top_p=args.top_p,
                                 temperature=1.0, pad_token_id=self.tokenizer.pad_token_id,
                                 eos_token_id=self.tokenizer.eos_token_id),
            critic_train_remote=critic_train_remote,
        )
        trainer.fit(self.prompts_dataloader, args)


@ray.remote(num_gpus=1)
class CriticModelRayActor(BasePPORole):
    def init_model_from_pretrained(self, args):
        self.setup(args)
        model = AutoModelForSequenceClassification.from_pretrained(args.critic_pretrain, num_labels=1,
                                                                   torch_dtype=torch.bfloat16)
        optim = torch.optim.AdamW(model.parameters(), lr=args.critic_learning_rate)
        self.critic, self.critic_optim, _ = self.strategy.prepare(model, optim, None, args.micro_train_batch_size)
        self.batches = []

    @torch.no_grad()
    def forward(self, sequences, action_mask, attention_mask):
        device = torch.cuda.current_device()
        hidden = self.critic(sequences.to(device), attention_mask=attention_mask.to(device),
                             output_hidden_states=True).hidden_states[-1]
        values = self.critic.module.score(hidden).squeeze(-1)[:, -action_mask.size(1):]
        self.batches.append((sequences, action_mask, attention_mask, values.cpu()))
        return values.cpu()

    def fit(self):
        """Train on the values collected during the rollout; returns this critic's status."""
        device = torch.cuda.current_device()
        status = []
        for sequences, action_mask, attention_mask, old_values in self.batches:
            hidden = self.critic(sequences.to(device), attention_mask=attention_mask.to(device),
                                 output_hidden_states=True).hidden_states[-1]
            values = self.critic.module.score(hidden).squeeze(-1)[:, -action_mask.size(1):]
            mask = action_mask.to(device)
            loss = (((values - old_values.to(device)) ** 2) * mask).sum() / mask.sum()
            self.strategy.backward(loss, self.critic)
            self.strategy.optimizer_step(self.critic)
            status.append({"critic_loss": loss.item(), "values": (values * mask).sum().item() / mask.sum().item()})
        self.batches.clear()
        mean = {k: sum(s[k] for s in status) / max(len(status), 1) for k in ("critic_loss", "values")}
        return self.strategy.all_reduce(mean)


@ray.remote(num_gpus=1)
class ReferenceModelRayActor(BasePPORole):
    def init_model_from_pretrained(self, args):
        self.setup(args)
        self.model = Actor(args.pretrain).to(torch.cuda.current_device()).eval()

    @torch.no_grad()
    def forward(self, sequences, num_actions, attention_mask):
        device = torch.cuda.current_device()
        return self.model(sequences.to(device), num_actions, attention_mask.to(device)).cpu()


@ray.remote(num_gpus=1)
class RewardModelRayActor(BasePPORole):
    def init_model_from_pretrained(self, args):
        self.setup(args)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            args.reward_pretrain, num_labels=1, torch_dtype=torch.bfloat16).to(torch.cuda.current_device()).eval()

    @torch.no_grad()
    def forward(self, sequences, attention_mask):
        device = torch.cuda.current_device()
        return self.model(sequences.to(device), attention_mask=attention_mask.to(device)).logits.squeeze(-1).cpu()


class PPORayActorGroup:
    def __init__(self, num_gpus, ray_actor_type, master_port):
        self._actor_handlers = [
            ray_actor_type.remote(num_gpus, rank, 0 if num_gpus == 1 else rank, None, master_port)
            for rank in range(num_gpus)
        ]

    def async_init_model_from_pretrained(self, args):
        return [actor.init_model_from_pretrained.remote(args) for actor in self._actor_handlers]

    def async_fit_actor_model(self, critic_model_group, initial_model_group, reward_model_groups):
        critic_actors = critic_model_group._actor_handlers
        initial_actors = initial_model_group._actor_handlers
        refs = []
        # actor workers choose their critic/reward/reference workers round robin
        for i, actor in enumerate(self._actor_handlers):
            critic_actor = critic_actors[i % len(critic_actors)]
            initial_actor = initial_actors[i % len(initial_actors)]
            reward_actors = [g._actor_handlers[i % len(g._actor_handlers)] for g in reward_model_groups]
            refs.append(actor.fit.remote(
                critic_model=critic_actor,
                initial_model=initial_actor,
                reward_models=reward_actors,
                # whether this actor worker should trigger the training of its critic worker
                critic_train_remote=(i < len(critic_actors)),
            ))
        return refs
