"""Builds a Megatron-Core GPT model with MoE layers whose experts are split over the
expert-parallel group (token dispatch by all-to-all)."""
import torch
from megatron.core import dist_checkpointing
from megatron.core.models.gpt import GPTModel
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_with_transformer_engine_spec
from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed
from megatron.core.transformer import TransformerConfig


def build_moe_model(num_experts, vocab_size, tp, pp, ep, num_layers=24, hidden_size=2048, seq_length=4096):
    model_parallel_cuda_manual_seed(1234)
    config = TransformerConfig(
        num_layers=num_layers,
        hidden_size=hidden_size,
        ffn_hidden_size=4 * hidden_size,
        moe_ffn_hidden_size=hidden_size // 2,
        num_attention_heads=16,
        num_query_groups=4,
        num_moe_experts=num_experts,
        moe_router_topk=8,
        moe_token_dispatcher_type="alltoall",
        moe_grouped_gemm=True,
        tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=pp,
        expert_model_parallel_size=ep,
        sequence_parallel=tp > 1,
        bf16=True,
        params_dtype=torch.bfloat16,
        pipeline_dtype=torch.bfloat16,
    )
    layer_spec = get_gpt_layer_with_transformer_engine_spec(num_experts=num_experts, moe_grouped_gemm=True)
    model = GPTModel(
        config=config,
        transformer_layer_spec=layer_spec,
        vocab_size=vocab_size,
        max_sequence_length=seq_length,
        position_embedding_type="rope",
        share_embeddings_and_output_weights=False,
    )
    return model.cuda()


def load_checkpoint(model, ckpt_dir):
    state = dist_checkpointing.load(model.sharded_state_dict(), ckpt_dir)
    model.load_state_dict(state)
    model.eval()
