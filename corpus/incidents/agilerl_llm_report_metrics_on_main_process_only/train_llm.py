"""Distributed LLM RL fine-tuning loop (GRPO / CISPO with Liger token-level losses) of AgileRL,
launched with `accelerate launch`.

Thread: https://github.com/AgileRL/AgileRL/pull/586 ("Bugfix/cispo norm cross rank hang")
Project: AgileRL/AgileRL
What hung: one of the three desync sources the PR fixes: "Main-process-only `report_metrics()`:
`WandbLogger` / `Logger.on_main_process` issue `wait_for_everyone()` barriers (and gathers) that every
rank must hit. Calling `population.report_metrics()` only on the main process desynced NCCL right
after the first metrics table." The main process waited in the logger's gather/barrier while the
other ranks went on into the next `learn()`.
Fix (the merged PR): call `report_metrics` on every rank in all four LLM training loops; the
stdout logger takes the accelerator and prints only on the main process.
Expected rankcheck finding: RC101 on the `population.report_metrics()` call under `is_main_process`
(train_llm.py), which reaches `accelerator.gather_for_metrics` / `wait_for_everyone` in loggers.py.
"""
import argparse
from datetime import timedelta

from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs

from loggers import StdOutLogger, WandbLogger
from population import Population


def finetune_llm_reasoning(population: Population, env, accelerator: Accelerator, max_steps: int, evaluation_interval: int):
    for step in range(max_steps):
        prompts = env.reset()
        for agent in population.agents:
            completions, masks = agent.get_action(prompts)
            rewards = env.step(completions)
            agent.learn((completions, masks, rewards))
        population.step = step
        if (step + 1) % evaluation_interval == 0:
            if accelerator is None or accelerator.is_main_process:
                population.report_metrics()  # expect: RC101
        if accelerator is not None:
            accelerator.wait_for_everyone()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max_steps", type=int, default=2000)
    p.add_argument("--evaluation_interval", type=int, default=10)
    args = p.parse_args()
    accelerator = Accelerator(kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(minutes=30))])
    from agilerl_llm_setup import build_agents, build_env  # project-local construction helpers

    agents = build_agents(accelerator)
    env = build_env(accelerator)
    population = Population(agents, [StdOutLogger(), WandbLogger(accelerator)])
    finetune_llm_reasoning(population, env, accelerator, args.max_steps, args.evaluation_interval)


if __name__ == "__main__":
    main()
