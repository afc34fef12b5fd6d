"""lmms-eval (trimmed): part of the reconstruction of
https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1304; see lmms_eval/__main__.py for the incident
description."""
