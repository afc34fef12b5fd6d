from handlers.classification_saver import ClassificationSaver

__all__ = ["ClassificationSaver"]
