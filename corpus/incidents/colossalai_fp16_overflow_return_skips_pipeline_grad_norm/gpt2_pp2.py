# ColossalAI-style config for train_gpt_pipeline.py
parallel = dict(pipeline=2)
fp16 = dict(mode="naive", initial_scale=2 ** 16)
clip_grad_norm = 1.0
num_microbatches = 4
vocab_size = 50304
hidden_size = 768
num_heads = 12
num_layers = 12
seq_len = 1024
batch_size = 8
lr = 1.5e-4
num_epochs = 1
