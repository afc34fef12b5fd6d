"""Batch grading with an LLM under accelerate: each process generates answers for its share of the
prompts, then the results are gathered with `gather_object`, but the gather sits inside
`if distributed_state.is_main_process:`.

Thread: https://github.com/huggingface/accelerate/issues/2733
Project: huggingface/accelerate
What hung: `accelerate.utils.gather_object` is an all-gather of Python objects; only the main
process called it and waited for the others, which had returned from the function.
Fix (maintainer, muellerzr): "You also need to call `gather_object` across every worker/GPU" --
gather on all processes, then print on the main one.
Expected rankcheck finding: RC101 on the guarded `gather_object` call.
"""
import torch
from accelerate import Accelerator, notebook_launcher
from accelerate.utils import gather_object
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_PATH = "mistralai/Mistral-7B-Instruct-v0.2"


def grade(inputs):
    distributed_state = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(MODEL_PATH)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(MODEL_PATH, torch_dtype=torch.bfloat16)
    model.to(distributed_state.device)

    txt_out = []
    with distributed_state.split_between_processes(inputs) as prompts:
        for prompt in prompts:
            enc = tokenizer(prompt, return_tensors="pt").to(distributed_state.device)
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=256, do_sample=False)
            txt_out.append(tokenizer.decode(out[0][enc["input_ids"].shape[1]:], skip_special_tokens=True))

    if distributed_state.is_main_process:
        all_answers = gather_object(txt_out)  # expect: RC101
        print(all_answers[0])
        print(all_answers[1])


if __name__ == "__main__":
    questions = [f"Grade this answer on a 1-10 scale: {i}" for i in range(64)]
    notebook_launcher(grade, (questions,), num_processes=2)
