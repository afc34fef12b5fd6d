"""Trimmed bigdl/orca/common.py: a local Spark session plus a Ray runtime on the same machine."""
import ray
from pyspark.sql import SparkSession

_spark = None


def init_orca_context(cluster_mode="local", cores=4, memory="8g", init_ray_on_spark=True):
    global _spark
    _spark = (SparkSession.builder.master(f"local[{cores}]")
              .config("spark.driver.memory", memory).getOrCreate())
    if init_ray_on_spark:
        ray.init(num_cpus=cores, ignore_reinit_error=True)
    return _spark.sparkContext


def get_spark_session():
    return _spark


def stop_orca_context():
    ray.shutdown()
    if _spark is not None:
        _spark.stop()
