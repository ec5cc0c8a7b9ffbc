"""PipelinesIT's pipeline: two materialized views defined in Python.

The flow functions run in the client (spark-pipelines), which sends the plans they return; no Python runs on
the server, so under policies/shared-server.yaml this is no user code, only a pipeline (for authors).
"""
from pyspark import pipelines as dp
from pyspark.sql import DataFrame, SparkSession

spark = SparkSession.active()


@dp.materialized_view
def sparkgate_squares() -> DataFrame:
    return spark.range(5).selectExpr("id", "id * id AS square")


@dp.materialized_view
def sparkgate_even_squares() -> DataFrame:
    return spark.read.table("sparkgate_squares").where("id % 2 = 0")
