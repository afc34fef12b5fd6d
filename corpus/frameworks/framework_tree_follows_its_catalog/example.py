"""One of the framework's examples: it resumes through the catalogued `skip_first_batches`, whose
contract keeps every process's loader as long as the others' (silent), and through a helper the
catalog does not describe, whose rank branch is followed (reported)."""
from accelerate import Accelerator


def train(loader, resume_step):
    accelerator = Accelerator()
    active = accelerator.skip_first_batches(loader, resume_step)
    for batch in active:
        accelerator.wait_for_everyone()
    resumed = accelerator.custom_resume(loader, resume_step)
    for batch in resumed:  # expect: RC103
        accelerator.wait_for_everyone()
