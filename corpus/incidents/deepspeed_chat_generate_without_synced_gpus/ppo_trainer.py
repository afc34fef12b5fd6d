"""DeepSpeed-Chat step 3 (RLHF PPO) trainer: the actor, a DeepSpeed ZeRO-3 engine, generates the
experience with Hugging Face `generate`.

Thread: https://github.com/deepspeedai/DeepSpeedExamples/pull/636 ("DS Chat Step 3 - Fix Zero Stage 3")
Project: deepspeedai/DeepSpeedExamples (applications/DeepSpeed-Chat)
What hung: "Prior to this fix, Z3 enabled actor models would hang during DS Chat step 3 training."
Under ZeRO-3 every decoding step's forward all-gathers the partitioned parameters. Each rank
decodes its own prompts and stops when its sequences are done, so a rank that finishes early
stops issuing those all-gathers while the others are still decoding and wait for it: the loop in
`generate` runs a different number of times per rank (the reason transformers added
`generate(synced_gpus=True)`, huggingface/transformers#22242).
(This reconstruction samples with an EOS stop, so the generated lengths differ per rank.)
Fix: pass `synced_gpus=True` when the actor runs ZeRO stage 3, so finished ranks keep stepping
until every rank is done.
Expected rankcheck finding: RC103 on the `generate(...)` call: its decoding loop is data-dependent
per rank and every iteration is a ZeRO-3 collective.
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
            seq = self.actor_model.module.generate(  # expect: RC103
                prompts,
                attention_mask=mask,
                max_new_tokens=self.max_answer_seq_len,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
                do_sample=True,
                top_p=0.9,
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
