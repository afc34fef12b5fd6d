"""Training statistics accumulator (onmt/utils/statistics.py), trimmed to what the trainer updates."""
import math
import time


class Statistics(object):
    def __init__(self, loss=0.0, n_words=0, n_correct=0):
        self.loss = loss
        self.n_words = n_words
        self.n_correct = n_correct
        self.n_src_words = 0
        self.start_time = time.time()

    def update(self, stat):
        self.loss += stat.loss
        self.n_words += stat.n_words
        self.n_correct += stat.n_correct

    def accuracy(self):
        return 100 * (self.n_correct / max(self.n_words, 1))

    def ppl(self):
        return math.exp(min(self.loss / max(self.n_words, 1), 100))
