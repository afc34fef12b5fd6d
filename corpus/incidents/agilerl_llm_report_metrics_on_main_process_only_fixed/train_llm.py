"""Fixed twin of agilerl_llm_report_metrics_on_main_process_only: every rank calls report_metrics;
the stdout logger prints on the main process only.
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
            population.report_metrics()
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
    population = Population(agents, [StdOutLogger(accelerator), WandbLogger(accelerator)])
    finetune_llm_reasoning(population, env, accelerator, args.max_steps, args.evaluation_interval)


if __name__ == "__main__":
    main()
