"""PipelinesIT's client for what is not the spark-pipelines CLI: reading a pipeline's tables back, and saving
and loading an ML PipelineModel. It connects as pyspark_client.py does (the token from SPARKGATE_COMPAT_TOKEN,
the CA through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH; neither for a direct, plaintext connection):

    python pipelines_client.py --host H --port P [--ca ca.pem] read TABLE
    python pipelines_client.py --host H --port P [--ca ca.pem] save-model PATH
    python pipelines_client.py --host H --port P [--ca ca.pem] load-model PATH

It prints one JSON line: {"outcome": "ok|error", "detail": ...}; for "read", detail is the table's rows
(lists, ordered by the first column); for an error, str(exception), exactly what the user sees.
"""
import argparse
import json
import sys

from pyspark_client import connect


def read(spark, table):
    rows = spark.read.table(table).orderBy(spark.read.table(table).columns[0]).collect()
    return [list(r) for r in rows]


def save_model(spark, path):
    from pyspark.ml import PipelineModel
    from pyspark.ml.feature import Binarizer

    PipelineModel(stages=[Binarizer(threshold=0.5, inputCol="x", outputCol="y")]).write().overwrite().save(path)
    return path


def load_model(spark, path):
    from pyspark.ml import PipelineModel

    model = PipelineModel.load(path)
    return [type(stage).__name__ for stage in model.stages]


COMMANDS = {"read": read, "save-model": save_model, "load-model": load_model}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--ca")
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument("argument")
    args = parser.parse_args()
    args.trust = "env"
    spark = connect(args)
    try:
        detail = COMMANDS[args.command](spark, args.argument)
        outcome = "ok"
    except Exception as e:  # noqa: BLE001 - the error, exactly as the user sees it
        outcome, detail = "error", str(e)
    finally:
        spark.stop()
    print(json.dumps({"outcome": outcome, "detail": detail}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
