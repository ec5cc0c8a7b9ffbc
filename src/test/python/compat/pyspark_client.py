"""Runs the compatibility suite's scenarios with a real PySpark Connect client and prints one JSON line each.

Run by PySparkClient (src/test/java/io/sparkgate/compat) in a virtual environment holding one PySpark
(pyspark-client or pyspark[connect]) at one version:

    python pyspark_client.py --host H --port P [--ca ca.pem] [--trust env|channel_builder]
                             --server-version 4.1.4 SCENARIO...

The token comes from the environment (SPARKGATE_COMPAT_TOKEN), never from the command line, so that it does
not show in process listings. Without a token and a CA the connection is plaintext (a direct baseline).
Each line: {"scenario": "range", "outcome": "pass|fail|refused|ran|unsupported", "detail": "..."}. For a
refusal scenario, detail is str(exception): exactly what the user sees.
"""
import argparse
import json
import os
import sys
import tempfile
import threading
import time
import traceback

TOKEN_ENV = "SPARKGATE_COMPAT_TOKEN"


class Unsupported(Exception):
    """This PySpark version has no such API."""


def connect(args):
    token = os.environ.get(TOKEN_ENV) or None
    if args.trust == "channel_builder":
        return connect_with_channel_builder(args, token)
    if args.ca:
        # PySpark has no CA option of its own: gRPC's C core reads this when it first builds TLS credentials,
        # so it must be set before the first secure channel (here: before pyspark is imported at all).
        os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = args.ca
    from pyspark.sql import SparkSession

    url = f"sc://{args.host}:{args.port}/"
    if args.ca:
        # A token alone turns TLS on, except to "localhost", where PySpark 4.x uses gRPC's local (plaintext)
        # credentials instead: use_ssl=true makes it TLS whatever the host is called.
        url += ";use_ssl=true"
    if token:
        url += ";token=" + token
    return SparkSession.builder.remote(url).getOrCreate()


def connect_with_channel_builder(args, token):
    """A ChannelBuilder whose TLS trusts exactly the given CA (PySpark 4.0+: SparkSession.builder.channelBuilder)."""
    import grpc

    # The Connect session's builder: pyspark.sql.SparkSession.builder (the classic one in pyspark[connect])
    # has no channelBuilder.
    from pyspark.sql.connect.session import SparkSession

    try:
        from pyspark.sql.connect.client import DefaultChannelBuilder
    except ImportError:
        # 3.5 has SparkSession.builder.channelBuilder, but its one ChannelBuilder builds the TLS channel inside
        # toChannel with no hook to reuse (no _secure_channel, no token property): use the variable there.
        raise Unsupported("PySpark before 4.0 has no DefaultChannelBuilder to extend; "
                          "use GRPC_DEFAULT_SSL_ROOTS_FILE_PATH")

    with open(args.ca, "rb") as f:
        root_certificates = f.read()

    class PrivateCaChannelBuilder(DefaultChannelBuilder):
        def toChannel(self):
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            if self.token is not None:
                credentials = grpc.composite_channel_credentials(
                    credentials, grpc.access_token_call_credentials(self.token))
            return self._secure_channel(self.endpoint, credentials)

    url = f"sc://{args.host}:{args.port}/;use_ssl=true"
    if token:
        url += ";token=" + token
    return SparkSession.builder.channelBuilder(PrivateCaChannelBuilder(url)).getOrCreate()


# --- scenarios that must work: each returns a detail, or raises AssertionError with what it saw ---------------

def s_version(spark, args):
    assert spark.version == args.server_version, f"spark.version {spark.version} != {args.server_version}"
    return spark.version


def s_range(spark, args):
    row = spark.range(1000).selectExpr("sum(id) AS s", "count(*) AS c").collect()[0]
    assert (row.s, row.c) == (499500, 1000), f"sum/count {row}"
    return f"sum {row.s}, count {row.c}"


def s_sql(spark, args):
    rows = spark.sql(
        "SELECT k, count(*) AS n FROM VALUES ('a'), ('b'), ('a') AS t(k) GROUP BY k ORDER BY k").collect()
    got = [(r.k, r.n) for r in rows]
    assert got == [("a", 2), ("b", 1)], f"rows {got}"
    return str(got)


def s_create_dataframe(spark, args):
    import pandas as pd

    rows = spark.createDataFrame([(1, "x"), (2, "y")], ["id", "name"]).orderBy("id").collect()
    got = [(r.id, r.name) for r in rows]
    assert got == [(1, "x"), (2, "y")], f"from rows: {got}"
    pdf = spark.createDataFrame(pd.DataFrame({"id": [3, 4], "v": [0.5, 1.5]})).orderBy("id").toPandas()
    assert pdf["id"].tolist() == [3, 4] and pdf["v"].tolist() == [0.5, 1.5], f"from pandas: {pdf}"
    return f"rows {got}; pandas {pdf.values.tolist()}"


LARGE_ROWS = 500_000


def s_large_result(spark, args):
    # About 8 MB of Arrow: with the servers' 1 s / 1 MiB sender limits the client must reattach several times.
    started = time.monotonic()
    pdf = spark.range(LARGE_ROWS).selectExpr("id", "id * 2 AS twice").toPandas()
    took = time.monotonic() - started
    assert len(pdf) == LARGE_ROWS, f"{len(pdf)} rows"
    ids = pdf["id"]
    assert int(ids.sum()) == LARGE_ROWS * (LARGE_ROWS - 1) // 2, "ids missing or repeated"
    assert (pdf["twice"] == ids * 2).all(), "wrong values"
    assert ids.is_monotonic_increasing, "rows out of order"
    return f"{len(pdf)} rows checked in {took:.1f} s"


def s_interrupt(spark, args):
    if not hasattr(spark, "interruptTag"):
        raise Unsupported("no SparkSession.interruptTag")
    # Spark's race, not Sparkgate's: an interrupt that reaches the operation while it is still being planned
    # cancels the operation but not the job Spark submits right after, which then runs to its end. The client
    # cannot see when the job starts, so a query the interrupt missed that way is waited out and tried again.
    missed = []
    for attempt in range(3):
        result, race = interrupt_once(spark, f"compat-interrupt-{attempt}")
        if not race:
            return result if not missed else f"{result} (after {len(missed)} missed: {missed})"
        missed.append(race)
    raise AssertionError(f"every interrupt landed before its job: {missed}")


def interrupt_once(spark, tag):
    """The scenario's outcome and None, or None and why the interrupt missed the job (Spark's race)."""
    outcome = {}

    def long_query():
        spark.addTag(tag)
        try:
            # Many short tasks and no shuffle: a cancel stops a job between tasks, never inside one, and an
            # interrupt that lands before the job is submitted leaves that job to run to its end, so it must be
            # bounded (the same query as the JVM client's, JvmClientProgram).
            outcome["rows"] = spark.range(0, 1 << 33, 1, 400).filter("hash(id, 7) = 0").collect()
        except Exception as e:  # noqa: BLE001 - the cancellation error is what we look for
            outcome["error"] = e
        finally:
            spark.removeTag(tag)

    worker = threading.Thread(target=long_query, daemon=True)
    worker.start()
    time.sleep(1.5)  # to reach its job: an interrupt while it is being planned does not cancel the job
    deadline = time.monotonic() + 60
    interrupted = []
    while not interrupted and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.5)
        interrupted = spark.interruptTag(tag)  # the operation ids it interrupted; empty until it runs
    worker.join(60)
    if interrupted and (worker.is_alive() or "rows" in outcome):
        worker.join(600)  # the missed job runs to its end; the next attempt needs the cores
        assert not worker.is_alive(), "a missed job still ran 11 minutes after the interrupt"
        return None, f"interrupted {len(interrupted)} operation(s), the query ran on to its end"
    assert not worker.is_alive(), "the query still ran 60 s after the interrupt"
    assert interrupted, f"interruptTag found nothing to interrupt; query ended with {outcome}"
    error = outcome.get("error")
    assert error is not None, f"the query finished: {len(outcome.get('rows') or [])} rows"
    text = str(error)
    assert "OPERATION_CANCELED" in text or "cancel" in text.lower(), f"not a cancellation: {text}"
    return f"interrupted {len(interrupted)} operation(s): {first_line(text)}", None


def s_rich_error(spark, args):
    from pyspark.errors import PySparkException

    spark.conf.set("spark.sql.ansi.enabled", "true")  # the default from 4.0 on, not in 3.5
    try:
        spark.sql("SELECT 1/0 AS x").collect()
    except PySparkException as e:
        condition = call_first(e, "getCondition", "getErrorClass")
        state = call_first(e, "getSqlState")
        if condition is None:
            # PySpark 3.5's Connect exceptions carry no error class (seen against a 4.3 server): the user has
            # the class and SQLSTATE in the message only, which must then hold both.
            text = str(e)
            assert text.startswith("[DIVIDE_BY_ZERO]") and "SQLSTATE: 22012" in text, f"no error class: {e}"
            assert state in (None, "22012"), f"SQLSTATE {state!r}: {e}"
            return f"{type(e).__name__}, class and SQLSTATE in the message only: {first_line(text)}"
        assert condition == "DIVIDE_BY_ZERO", f"error class {condition!r}: {e}"
        assert state == "22012", f"SQLSTATE {state!r}: {e}"
        return f"{type(e).__name__} {condition} {state}"
    raise AssertionError("SELECT 1/0 under ANSI mode returned a result")


# --- refusals: each returns what it returned if it ran; run() turns an exception into `refused` --------------

def r_python_udf(spark, args):
    from pyspark.sql.functions import udf

    plus_one = udf(lambda x: x + 1, "long")
    return spark.range(3).select(plus_one("id")).collect()


def r_pandas_udf(spark, args):
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("long")
    def plus_one(s: pd.Series) -> pd.Series:
        return s + 1

    return spark.range(3).select(plus_one("id")).collect()


def r_udtf(spark, args):
    try:
        from pyspark.sql.functions import udtf
    except ImportError:
        raise Unsupported("no pyspark.sql.functions.udtf (Python UDTFs came with 3.5)")

    @udtf(returnType="n: int")
    class Numbers:
        def eval(self, count: int):
            for i in range(count):
                yield (i,)

    from pyspark.sql.functions import lit

    return Numbers(lit(3)).collect()


def r_python_data_source(spark, args):
    try:
        from pyspark.sql.datasource import DataSource, DataSourceReader
    except ImportError:
        raise Unsupported("no pyspark.sql.datasource (Python data sources came with 4.0)")
    if not hasattr(spark, "dataSource"):
        raise Unsupported("no SparkSession.dataSource")

    class Reader(DataSourceReader):
        def read(self, partition):
            yield (1,)

    class Numbers(DataSource):
        @classmethod
        def name(cls):
            return "compat_numbers"

        def schema(self):
            return "n int"

        def reader(self, schema):
            return Reader()

    spark.dataSource.register(Numbers)
    return spark.read.format("compat_numbers").load().collect()


def r_map_in_pandas(spark, args):
    def double(batches):
        for pdf in batches:
            yield pdf * 2

    return spark.range(3).mapInPandas(double, "id long").collect()


def r_foreach_batch(spark, args):
    def sink(batch, batch_id):
        pass

    query = spark.readStream.format("rate").load().writeStream.foreachBatch(sink).start()
    query.stop()
    return "a streaming query with foreachBatch started"


def r_add_artifact(spark, args):
    add = getattr(spark, "addArtifacts", None) or getattr(spark, "addArtifact", None)
    if add is None:
        raise Unsupported("no SparkSession.addArtifacts")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "compat_helper.py")
        with open(path, "w") as f:
            f.write("def helper():\n    return 1\n")
        add(path, pyfile=True)
    return "compat_helper.py uploaded"


def r_reflect(spark, args):
    return spark.sql("SELECT reflect('java.lang.System', 'getProperty', 'user.home') AS home").collect()


def r_local_file_read(spark, args):
    return spark.read.text("/etc/hostname").collect()


def r_conf_set(spark, args):
    spark.conf.set("spark.sql.artifact.copyFromLocalToFs.allowDestLocal", "true")
    return "spark.sql.artifact.copyFromLocalToFs.allowDestLocal set"


MUST_WORK = {
    "version": s_version,
    "range": s_range,
    "sql": s_sql,
    "create_dataframe": s_create_dataframe,
    "large_result": s_large_result,
    "interrupt": s_interrupt,
    "rich_error": s_rich_error,
}
REFUSALS = {
    "python_udf": r_python_udf,
    "pandas_udf": r_pandas_udf,
    "udtf": r_udtf,
    "python_data_source": r_python_data_source,
    "map_in_pandas": r_map_in_pandas,
    "foreach_batch": r_foreach_batch,
    "add_artifact": r_add_artifact,
    "reflect": r_reflect,
    "local_file_read": r_local_file_read,
    "conf_set": r_conf_set,
}


def run(spark, args, scenario):
    if scenario in MUST_WORK:
        try:
            return "pass", MUST_WORK[scenario](spark, args)
        except Unsupported as e:
            return "unsupported", str(e)
        except AssertionError as e:
            return "fail", str(e)
        except Exception as e:  # noqa: BLE001 - any error is this scenario's failure, shown as the user sees it
            return "fail", f"{type(e).__name__}: {e}"
    try:
        return "ran", str(REFUSALS[scenario](spark, args))
    except Unsupported as e:
        return "unsupported", str(e)
    except Exception as e:  # noqa: BLE001 - the refusal, exactly as the user sees it
        text = str(e)
        if "python worker" in text.lower():
            # Not refused: the server started a Python worker for the user's code (direct to a server whose
            # workers cannot import pyspark, the code then fails; it ran all the same).
            return "ran", "the server ran the user code in a Python worker, which failed: " + first_line(text)
        return "refused", text


def call_first(obj, *names):
    for name in names:
        method = getattr(obj, name, None)
        if method is not None:
            return method()
    return None


def first_line(text):
    return text.strip().splitlines()[0] if text.strip() else text


def emit(scenario, outcome, detail):
    print(json.dumps({"scenario": scenario, "outcome": outcome, "detail": str(detail)}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--ca")
    parser.add_argument("--trust", choices=["env", "channel_builder"], default="env")
    parser.add_argument("--server-version", required=True)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()
    unknown = [s for s in args.scenarios if s not in MUST_WORK and s not in REFUSALS]
    if unknown:
        parser.error(f"unknown scenarios {unknown}")

    try:
        spark = connect(args)
    except Unsupported as e:
        for scenario in args.scenarios:
            emit(scenario, "unsupported", str(e))
        return 0
    try:
        for scenario in args.scenarios:
            started = time.monotonic()
            outcome, detail = run(spark, args, scenario)
            print(f"{scenario}: {outcome} in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
            emit(scenario, outcome, detail)
    finally:
        try:
            spark.stop()
        except Exception:  # noqa: BLE001 - the session may already be gone; the outcomes are printed
            traceback.print_exc()
    return 0


if __name__ == "__main__":
    sys.exit(main())
