"""Safe twin of accelerate_gather_object_main_process.py: `gather_object` runs on every process;
only printing is done by the main process.

Thread: https://github.com/huggingface/accelerate/issues/2733
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

    all_answers = gather_object(txt_out)
    if distributed_state.is_main_process:
        print(all_answers[0])
        print(all_answers[1])


if __name__ == "__main__":
    questions = [f"Grade this answer on a 1-10 scale: {i}" for i in range(64)]
    notebook_launcher(grade, (questions,), num_processes=2)
