"""Local statistics over a rank's own history; despite the names, nothing here talks to other ranks."""


def all_gather_metrics(history: dict) -> dict:
    return {name: sum(values) / max(len(values), 1) for name, values in history.items()}


def broadcast_summary(summary: dict) -> str:
    return ", ".join(f"{k}={v:.4f}" for k, v in sorted(summary.items()))
