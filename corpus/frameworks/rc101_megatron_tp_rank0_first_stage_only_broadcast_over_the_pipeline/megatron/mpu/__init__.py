"""Model parallel utilities, vendored from Megatron-LM (before megatron.core): the package
re-exports what its modules define, and the rest of the tree calls `mpu.<name>`."""
from .initialize import get_pipeline_model_parallel_group
from .initialize import get_pipeline_model_parallel_rank
from .initialize import get_tensor_model_parallel_group
from .initialize import get_tensor_model_parallel_rank
from .initialize import get_tensor_model_parallel_world_size
from .initialize import is_pipeline_first_stage
from .initialize import is_pipeline_last_stage
from .random import gather_split_1d_tensor
from .initialize import get_pipeline_model_parallel_first_rank
