"""A `continue` some ranks take in a `while True:` loop before they have issued anything this
round goes round again: the loop counts no rounds, so those ranks meet the others at the round's
first collective a round later (Megatron's and metaseq's interactive generation: rank 0 asks for
a prompt again when the last one was empty or too long, the others wait in the broadcast).

The look-alikes hang: a `continue` some ranks take on every round (they spin while the others
wait), one taken after the round's first collective (the ranks part there), and one in a loop
whose rounds are counted (by a `while` bound or a `for`)."""
import torch.distributed as dist


def serve(tokenizer, generate, max_len):
    request = [None]
    while True:
        if dist.get_rank() == 0:
            prompt = input("Prompt: ").rstrip()
            if not prompt:
                continue
            tokens = tokenizer.encode(prompt)
            if len(tokens) >= max_len:
                print("Please give a shorter prompt")
                continue
            request = [tokens]
        dist.broadcast_object_list(request, src=0)
        output = generate(request[0])
        if dist.get_rank() == 0:
            print(output)


def generate_from_file(path, tokenizer, generate, max_len, tp_rank):
    # Megatron's generate_samples_input_from_file: the first stage's tensor-parallel rank 0 reads
    # the prompts and skips one too long for the model.
    if dist.get_rank() == 0 and tp_rank == 0:
        with open(path) as f:
            lines = f.readlines()
        count = len(lines)
    position = 0
    while True:
        stop = 0
        length = 0
        if dist.get_rank() == 0 and tp_rank == 0:
            line = lines[position]
            position += 1
            if position == count:
                line = "stop"
            if "stop" in line:
                stop = 1
            else:
                tokens = tokenizer.encode(line)
                length = len(tokens)
                if length >= max_len:
                    continue
        flags = [stop, length]
        dist.broadcast_object_list(flags, src=0)
        if flags[0]:
            return
        generate(tokens, flags[1])


def spin():
    while True:
        if dist.get_rank() == 0:
            continue  # expect: RC102
        dist.barrier()


def retried_after_the_first_collective(tokenizer):
    request = [None]
    while True:
        dist.barrier()
        if dist.get_rank() == 0:
            prompt = input("Prompt: ").rstrip()
            if not prompt:
                continue  # expect: RC102
            request = [tokenizer.encode(prompt)]
        dist.broadcast_object_list(request, src=0)


def rounds_counted(tokenizer, rounds):
    request = [None]
    done = 0
    while done < rounds:
        done += 1
        if dist.get_rank() == 0:
            prompt = input("Prompt: ").rstrip()
            if not prompt:
                continue  # expect: RC102
            request = [tokenizer.encode(prompt)]
        dist.broadcast_object_list(request, src=0)


def skipped_batches(loader):
    for batch in loader:
        if dist.get_rank() == 0:
            if batch is None:
                continue  # expect: RC102
        dist.barrier()
