"""PPO trainer run inside every actor worker. Rollouts are produced with the actor, scored by the
remote reference/reward/critic models, and trained on for `max_epochs`; status dictionaries are
averaged across the actor workers and logged.

Thread: https://github.com/OpenRLHF/OpenRLHF/pull/135 ("fix: remove unnecessary allreduce which will
cause timeout", merged as d7d0acf)
Project: OpenRLHF/OpenRLHF (openrlhf/trainer/ppo_trainer.py, openrlhf/trainer/ray/ppo_actor.py,
openrlhf/trainer/ray/launcher.py)
What hung: PPO on Ray timed out in NCCL at the first logging step. The maintainer's diagnosis: "This
all_reduce will cause timeout on ray because logs_dict is asymmetric across all actors. When train on
ray, some actors are responsible for triggering remote critic model training." The launcher sets
`critic_train_remote=(i < len(critic_actors))`, so only the first actor workers call
`critic.fit.remote()` and merge the critic's status ("critic_loss", "values") into theirs.
`save_logs_and_checkpoints` then all-reduces the whole logs dict, one all_reduce per key: the workers
with the critic keys issue two more all_reduces than the others, which have already gone on to the
next rollout, so the collectives pair up wrongly and the job hangs until the NCCL timeout.
Fix (merged): drop the all_reduce in `save_logs_and_checkpoints`; the per-step status is already
all-reduced in the training loop and the critic's numbers are averaged in the critic's own group.
Expected rankcheck finding: RC104 on `self.strategy.all_reduce(logs_dict)`, a collective over a dict
whose key set (and so the sequence of tensors reduced) differs per worker.
Inferred: the experience maker is reduced to generation plus remote scoring, the ZeRO stage is 2,
the pretrain (ptx) loss, EMA and checkpoint saving of the real trainer are left out.
"""
import ray
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from .experience import Experience, RemoteExperienceMaker, ReplayBuffer


class PPOTrainer:
    def __init__(self, strategy, actor, critic, reward_model, initial_model, actor_optim, actor_scheduler,
                 tokenizer, micro_train_batch_size, max_epochs, eps_clip, prompt_max_len, generate_kwargs):
        self.strategy = strategy
        self.actor = actor
        self.critic = critic
        self.actor_optim = actor_optim
        self.actor_scheduler = actor_scheduler
        self.tokenizer = tokenizer
        self.max_epochs = max_epochs
        self.eps_clip = eps_clip
        self.prompt_max_len = prompt_max_len
        self.generate_kwargs = generate_kwargs
        self.replay_buffer = ReplayBuffer(micro_train_batch_size)
        self.experience_maker = RemoteExperienceMaker(actor, critic, reward_model, initial_model, strategy)

    def fit(self, prompts_dataloader, args):
        update_timesteps = args.rollout_batch_size // (self.strategy.world_size * args.micro_rollout_batch_size)
        global_step = 1
        for episode in range(args.num_episodes):
            prompts_dataloader.sampler.set_epoch(episode)
            pbar = tqdm(range(len(prompts_dataloader)), disable=not self.strategy.is_rank_0())
            for prompts in prompts_dataloader:
                inputs = self.tokenizer(list(prompts), return_tensors="pt", max_length=self.prompt_max_len,
                                        padding=True, truncation=True).to(torch.cuda.current_device())
                experience = self.experience_maker.make_experience(**inputs, **self.generate_kwargs)
                self.replay_buffer.append(experience)

                if global_step % update_timesteps == 0:
                    self.replay_buffer.normalize("advantages", self.strategy)
                    status = self.ppo_train()
                    self.replay_buffer.clear()
                    self.save_logs_and_checkpoints(args, global_step // update_timesteps, pbar, status)
                pbar.update()
                global_step += 1

    def ppo_train(self):
        dataloader = DataLoader(self.replay_buffer, batch_size=self.replay_buffer.sample_batch_size,
                                shuffle=True, drop_last=True, collate_fn=self.replay_buffer.collate_fn)
        device = torch.cuda.current_device()
        status_list = []
        for _ in range(self.max_epochs):
            for experience in dataloader:
                experience.to_device(device)
                status = self.training_step(experience)
                # weighted mean of kl across the data-parallel workers
                status["kl"] *= status["response_length"]
                status = self.strategy.all_reduce(status)
                status["kl"] /= status["response_length"]
                status_list.append(status)

        status_mean = {}
        if status_list:
            status_mean = dict(status_list[0])
            for s in status_list[1:]:
                for k, v in s.items():
                    status_mean[k] += v
            for k in status_mean:
                status_mean[k] /= len(status_list)
        return status_mean

    def training_step(self, experience: Experience):
        return self.training_step_actor(experience)

    def training_step_actor(self, experience: Experience):
        self.actor.train()
        num_actions = experience.action_mask.size(1)
        log_probs = self.actor(experience.sequences, num_actions, attention_mask=experience.attention_mask)
        ratio = (log_probs - experience.action_log_probs).exp()
        surr1 = ratio * experience.advantages
        surr2 = ratio.clamp(1 - self.eps_clip, 1 + self.eps_clip) * experience.advantages
        mask = experience.action_mask
        actor_loss = (-torch.min(surr1, surr2) * mask).sum() / mask.sum()
        self.strategy.backward(actor_loss, self.actor)
        self.strategy.optimizer_step(self.actor)

        status = {"policy_loss": actor_loss.item()}
        for k, v in experience.info.items():
            if k == "kl":
                status[k] = ((v * experience.info["response_length"]).sum()
                             / experience.info["response_length"].sum()).item()
            else:
                status[k] = v.float().mean().item()
        return status

    def save_logs_and_checkpoints(self, args, global_step, step_bar, logs_dict):
        if global_step % args.logging_steps == 0:
            logs_dict = self.strategy.all_reduce(logs_dict)  # expect: RC104
            step_bar.set_postfix(logs_dict)
            if self.strategy.is_rank_0() and args.use_wandb:
                import wandb

                wandb.log({**{f"train/{k}": v for k, v in logs_dict.items()}, "train/global_step": global_step})


class ActorPPOTrainer(PPOTrainer):
    """The actor-side trainer on Ray: the critic trains in its own Ray actors."""

    def __init__(self, *args, critic_train_remote=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.critic_train_remote = critic_train_remote

    def ppo_train(self):
        # trigger the remote critic model training
        if self.critic_train_remote:
            critic_status_ref = self.critic.fit.remote()

        status = super().ppo_train()

        # wait for the remote critic training to finish
        if self.critic_train_remote:
            status.update(ray.get(critic_status_ref))
        return status
