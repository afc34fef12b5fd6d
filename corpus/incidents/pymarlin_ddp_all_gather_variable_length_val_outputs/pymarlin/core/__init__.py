from .trainer import Trainer, TrainerArguments
from .trainer_backend import DDPTrainerBackend, SingleProcess
