"""Multiple-choice tasks: each document becomes one loglikelihood request per answer choice; the
documents are sharded over ranks by striding, as lm-eval's `Task.build_all_requests` does."""
import itertools
from dataclasses import dataclass, field

from datasets import load_dataset


@dataclass
class Instance:
    request_type: str
    doc: dict
    doc_id: int
    arguments: tuple
    idx: int
    repeats: int = 1
    resps: list = field(default_factory=list)


class MultipleChoiceTask:
    OUTPUT_TYPE = "multiple_choice"
    DATASET_PATH, DATASET_NAME, SPLIT = None, None, "validation"

    def __init__(self):
        self.docs = load_dataset(self.DATASET_PATH, self.DATASET_NAME, split=self.SPLIT)
        self.instances = []

    def build_all_requests(self, limit=None, rank=0, world_size=1):
        self.instances = []
        for doc_id, doc in itertools.islice(enumerate(self.docs), rank, limit, world_size):
            ctx = self.doc_to_text(doc)
            for i, choice in enumerate(self.doc_to_choice(doc)):
                self.instances.append(Instance("loglikelihood", doc, doc_id, (ctx, f" {choice}"), idx=i))


class BoolQ(MultipleChoiceTask):
    DATASET_PATH, DATASET_NAME = "super_glue", "boolq"

    def doc_to_text(self, doc):
        return f"{doc['passage']}\nQuestion: {doc['question']}?\nAnswer:"

    def doc_to_choice(self, doc):
        return ["no", "yes"]

    def doc_to_target(self, doc):
        return int(doc["label"])

