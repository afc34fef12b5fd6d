"""Population of LLM agents (hyper-parameter optimisation population of AgileRL) and its metric
reporting."""
from typing import Dict, List

from loggers import Logger


class Population:
    def __init__(self, agents: List, loggers: List[Logger]):
        self.agents = agents
        self.loggers = loggers
        self.step = 0

    def collect_metrics(self) -> Dict[str, float]:
        metrics = {}
        for i, agent in enumerate(self.agents):
            metrics[f"agent_{i}/mean_reward"] = agent.mean_reward
            metrics[f"agent_{i}/kl"] = agent.kl
            metrics[f"agent_{i}/loss"] = agent.last_loss
        return metrics

    def report_metrics(self) -> None:
        metrics = self.collect_metrics()
        for logger in self.loggers:
            logger.log(metrics, step=self.step)
