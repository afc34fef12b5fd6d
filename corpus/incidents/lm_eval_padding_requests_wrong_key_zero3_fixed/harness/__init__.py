"""The parts of lm-evaluation-harness (v0.4.0 evaluator, multiple-choice tasks) that a fine-tuning
script calls in-process, plus an LM wrapper around the DeepSpeed engine being trained."""
