"""A trimmed copy of RTG (isi-nlp/rtg, "Reader Translator Generator", v0.6.0): the distributed
helper, the transformer NMT trainer and the pipeline entry point."""
import logging

log = logging.getLogger("rtg")
logging.basicConfig(level=logging.INFO, format="[%(asctime)s] p%(process)s %(levelname)s: %(message)s")
