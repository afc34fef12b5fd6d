"""LibreYOLO (trimmed): part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349;
see libreyolo/training/trainer.py for the incident description."""
