from .common import get_spark_session, init_orca_context, stop_orca_context

__all__ = ["init_orca_context", "stop_orca_context", "get_spark_session"]
