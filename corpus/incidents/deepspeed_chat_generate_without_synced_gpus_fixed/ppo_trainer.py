"""Safe twin of deepspeed_chat_generate_without_synced_gpus: the ZeRO-3 actor generates with
`synced_gpus=True`, so ranks that finish early keep running the decoding forward (and its
all-gathers) until every rank is done.

Thread: https://github.com/deepspeedai/DeepSpeedExamples/pull/636
"""
import torch
import torch.nn.functional as F


class DeepSpeedPPOTrainer:
    def __init__(self, rlhf_engine, args):
        self.rlhf_engine = rlhf_engine
        self.actor_model = rlhf_engine.actor
        self.critic_model = rlhf_engine.critic
        self.ref_model = rlhf_engine.ref
        self.reward_model = rlhf_engine.reward
        self.tokenizer = rlhf_engine.tokenizer
        self.args = args
        self.max_answer_seq_len = args.max_answer_seq_len
        self.z3_enabled = args.actor_zero_stage == 3

    def _generate_sequence(self, prompts, mask):
        with torch.no_grad():
            seq = self.actor_model.module.generate(
                prompts,
                attention_mask=mask,
                max_new_tokens=self.max_answer_seq_len,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
                do_sample=True,
                top_p=0.9,
                synced_gpus=self.z3_enabled,
            )
        return seq

    def generate_experience(self, prompts, mask):
        self.actor_model.eval()
        self.critic_model.eval()
        seq = self._generate_sequence(prompts, mask)
        pad_token_id = self.tokenizer.pad_token_id
        attention_mask = seq.not_equal(pad_token_id).long()
        with torch.no_grad():
            logits = self.actor_model(seq, attention_mask=attention_mask).logits
            ref_logits = self.ref_model(seq, attention_mask=attention_mask).logits
            reward_score = self.reward_model.forward_value(seq, attention_mask, prompt_length=prompts.shape[1])["chosen_end_scores"]
            values = self.critic_model.forward_value(seq, attention_mask, return_value_only=True)[:, :-1]
        return {
            "prompts": prompts,
            "logprobs": F.log_softmax(logits[:, :-1], dim=-1),
            "ref_logprobs": F.log_softmax(ref_logits[:, :-1], dim=-1),
            "value": values,
            "rewards": reward_score,
            "input_ids": seq,
            "attention_mask": attention_mask,
        }
