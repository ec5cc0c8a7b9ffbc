"""Drives the Spark 4.1+ protocol features with a real PySpark Connect client (4.1 or later) and prints facts.

Run by NewProtocolIT (src/test/java/io/sparkgate/compat) in the pyspark[connect] virtual environment:

    python new_protocol_client.py --host H --port P [--ca ca.pem] STEP...

The tokens come from the environment, never the command line: SPARKGATE_COMPAT_TOKEN (the first user) and
SPARKGATE_COMPAT_OTHER_TOKEN (a second user, for the isolation steps). Without a CA and tokens the connection
is plaintext straight to the server (the direct baseline). Each step prints one JSON object on a line; the
Java test asserts on it (and on the proxy's audit log), so this program reports and does not judge.
"""
import argparse
import hashlib
import json
import os
import sys
import time
import uuid

TOKEN_ENV = "SPARKGATE_COMPAT_TOKEN"
OTHER_TOKEN_ENV = "SPARKGATE_COMPAT_OTHER_TOKEN"

# A result of several MiB: 120,000 rows of an id and a 64-character hex string (about 9 MiB of Arrow).
CHUNKED_ROWS = 120_000
# What the client asks the server to cut Arrow batches into (ResultChunkingOptions.preferred_arrow_chunk_size).
PREFERRED_CHUNK_BYTES = 64 * 1024
# A string literal that inflates a plan past the proxy's 1 MiB bound and compresses to a few KiB.
LARGE_LITERAL_CHARS = 2 * 1024 * 1024


# Every session the steps open, stopped before the process exits (see main).
SESSIONS = []


def session(args, token_env, session_id=None):
    """A new Connect session (never the cached default one), as the first or the second user."""
    # The classic entry point, as users write it: remote() also switches pyspark.sql.functions to Connect.
    from pyspark.sql import SparkSession

    url = f"sc://{args.host}:{args.port}/"
    if args.ca:
        # use_ssl: "localhost" with a token alone would get gRPC's local, plaintext credentials.
        url += ";use_ssl=true"
    token = os.environ.get(token_env)
    if token:
        url += ";token=" + token
    if session_id:
        url += ";session_id=" + session_id
    spark = SparkSession.builder.remote(url).create()
    SESSIONS.append(spark)
    return spark


class PlanSpy:
    """Counts the plans this client sent compressed (Plan.compressed_operation), from the client's own code."""

    def __init__(self, spark):
        self.compressed = 0
        self.plain = 0
        client = spark._client
        original = client._try_compress_and_set_plan

        def spy(plan, message, op_type):
            original(plan, message, op_type)
            if plan.WhichOneof("op_type") == "compressed_operation":
                self.compressed += 1
            else:
                self.plain += 1

        client._try_compress_and_set_plan = spy


def error_fields(e):
    """What the user sees of an error, and the gRPC status underneath when PySpark kept it."""
    cause = e
    code = None
    while cause is not None and code is None:
        code_fn = getattr(cause, "code", None)
        if callable(code_fn):
            try:
                code = code_fn().name
            except Exception:  # noqa: BLE001 - not a grpc.Call after all
                code = None
        cause = cause.__cause__ or cause.__context__
    condition = getattr(e, "getCondition", lambda: None)()
    return {"error_type": type(e).__name__, "error": str(e), "grpc_code": code, "condition": condition}


def step_compressed_query(args):
    spark = session(args, TOKEN_ENV)
    spy = PlanSpy(spark)
    threshold, algorithm = spark._client._get_plan_compression_threshold_and_algorithm()
    # Long repeated text makes compression pay off, so the client really sends the plan compressed.
    prefix = "sparkgate-compressed-" * 8
    rows = spark.range(100).selectExpr("id", f"concat('{prefix}', id) AS s").where("id % 7 = 0").collect()
    got = [(r.id, r.s) for r in rows]
    want = [(i, f"{prefix}{i}") for i in range(0, 100, 7)]
    return {"session_id": spark._session_id, "threshold": threshold, "algorithm": algorithm,
            "rows": len(got), "rows_ok": got == want, "compressed": spy.compressed, "plain": spy.plain}


def attempt(args, query):
    """Runs query(spark) in a new session of the first user: what it returned or the error the user saw, and
    how many plans the client sent compressed."""
    spark = session(args, TOKEN_ENV)
    spy = PlanSpy(spark)
    out = {"session_id": spark._session_id}
    try:
        out["ran"] = query(spark)
    except Exception as e:  # noqa: BLE001 - the refusal, as the user sees it
        out.update(error_fields(e))
    out["compressed"] = spy.compressed
    return out


def step_python_udf(args):
    from pyspark.sql.functions import udf

    def query(spark):
        plus_one = udf(lambda x: x + 1, "long")
        return str(spark.range(3).select(plus_one("id")).collect())

    return attempt(args, query)


def step_large_literal(args):
    from pyspark.sql import functions as F

    def query(spark):
        return spark.range(1).select(F.length(F.lit("x" * LARGE_LITERAL_CHARS)).alias("n")).collect()[0].n

    return attempt(args, query)


def step_chunked(args):
    import pyspark.sql.connect.client.reattach as reattach

    spark = session(args, TOKEN_ENV)
    # PySpark 4.1+ sends ResultChunkingOptions(allow_arrow_batch_chunking=True) on every ExecutePlan; the
    # preferred chunk size is a SparkConnectClient constructor argument only, which SparkSession does not
    # expose, so it is set on the session's client before the query.
    spark._client._preferred_arrow_chunk_size = PREFERRED_CHUNK_BYTES
    seen = {"arrow_responses": 0, "chunked_responses": 0, "max_chunks": 0}
    original = reattach.ExecutePlanResponseReattachableIterator.send

    def send(self, value):
        response = original(self, value)
        if response.HasField("arrow_batch"):
            seen["arrow_responses"] += 1
            chunks = response.arrow_batch.num_chunks_in_batch
            if chunks > 1:
                seen["chunked_responses"] += 1
            seen["max_chunks"] = max(seen["max_chunks"], chunks)
        return response

    reattach.ExecutePlanResponseReattachableIterator.send = send
    table = spark.range(CHUNKED_ROWS).selectExpr("id", "sha2(cast(id AS string), 256) AS h").toArrow()
    digest = hashlib.sha256()
    for i, h in zip(table.column("id").to_pylist(), table.column("h").to_pylist()):
        digest.update(f"{i},{h}\n".encode())
    return dict(seen, session_id=spark._session_id, rows=table.num_rows, arrow_bytes=table.nbytes, checksum=digest.hexdigest())


def step_clone(args):
    """The first user clones a session with a temp view; the second names that session's id."""
    alice = session(args, TOKEN_ENV)
    alice.sql("CREATE OR REPLACE TEMP VIEW sparkgate_clone_probe AS SELECT 42 AS answer")
    clone_id = str(uuid.uuid4())
    clone = alice.cloneSession(clone_id)
    SESSIONS.append(clone)
    out = {"session_id": alice._session_id, "clone_id": clone._session_id, "asked_clone_id": clone_id,
           "clone_rows": [r.answer for r in clone.sql("SELECT answer FROM sparkgate_clone_probe").collect()]}
    # The clone is independent: a view made in it is not in its source.
    clone.sql("CREATE OR REPLACE TEMP VIEW sparkgate_clone_only AS SELECT 1 AS one")
    out["source_sees_clone_view"] = alice.catalog.tableExists("sparkgate_clone_only")

    bob = session(args, OTHER_TOKEN_ENV, session_id=alice._session_id)
    try:
        out["other_rows"] = [r.answer for r in bob.sql("SELECT answer FROM sparkgate_clone_probe").collect()]
    except Exception as e:  # noqa: BLE001 - expected: the second user's session of that id has no such view
        out["other_error"] = error_fields(e)
    try:
        bob_clone = bob.cloneSession()
        SESSIONS.append(bob_clone)
        out["other_clone_id"] = bob_clone._session_id
        try:
            out["other_clone_rows"] = [
                r.answer for r in bob_clone.sql("SELECT answer FROM sparkgate_clone_probe").collect()]
        except Exception as e:  # noqa: BLE001 - expected: a clone of the second user's own session
            out["other_clone_error"] = error_fields(e)
    except Exception as e:  # noqa: BLE001 - a refused clone is isolation too
        out["other_clone_refused"] = error_fields(e)
    return out


def states(response):
    """operation id -> state name (OPERATION_STATE_SUCCEEDED, ...) of a GetStatusResponse."""
    out = {}
    for s in response.operation_statuses:
        enum = s.DESCRIPTOR.fields_by_name["state"].enum_type
        out[s.operation_id] = enum.values_by_number[s.state].name
    return out


def step_status(args):
    """GetStatus, as PySpark 4.3's client sends it (SparkConnectClient._get_operation_statuses)."""
    alice = session(args, TOKEN_ENV)
    alice.range(10).collect()
    response = alice._client._get_operation_statuses()
    statuses = states(response)
    unknown = str(uuid.uuid4())
    asked = alice._client._get_operation_statuses(operation_ids=[unknown])
    out = {"session_id": alice._session_id, "response_session_id": response.session_id,
           "statuses": statuses,
           "unknown_asked": states(asked),
           "unknown_id": unknown}
    if os.environ.get(OTHER_TOKEN_ENV):
        bob = session(args, OTHER_TOKEN_ENV, session_id=alice._session_id)
        try:
            theirs = bob._client._get_operation_statuses()
            out["other_statuses"] = states(theirs)
        except Exception as e:  # noqa: BLE001 - a refusal is isolation too
            out["other_error"] = error_fields(e)
    return out


STEPS = {
    "compressed_query": step_compressed_query,
    "python_udf": step_python_udf,
    "large_literal": step_large_literal,
    "chunked": step_chunked,
    "clone": step_clone,
    "status": step_status,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--ca")
    parser.add_argument("steps", nargs="+", choices=sorted(STEPS))
    args = parser.parse_args()
    if args.ca:
        # Read by gRPC's C core when it first builds TLS credentials: before any channel exists.
        os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = args.ca
    # All steps in one process: starting Python and importing PySpark costs seconds each time.
    for step in args.steps:
        started = time.monotonic()
        try:
            out = STEPS[step](args)
        except Exception as e:  # noqa: BLE001 - reported, for the test to show
            out = {"failed": True, **error_fields(e)}
        took = round(time.monotonic() - started, 1)
        print(json.dumps({"step": step, "seconds": took, **out}, default=str), flush=True)
    # Stop the sessions while the interpreter is whole. Left to PySpark's exit hook and finalizers, a
    # session's ML cache clean-up and channel close can deadlock in gRPC during interpreter shutdown
    # (seen with PySpark 4.3: the process printed every step, then hung in Channel.close from
    # SparkSession.__del__).
    for spark in SESSIONS:
        try:
            spark.stop()
        except Exception:  # noqa: BLE001 - a session of a refused user may be gone already
            pass
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # No interpreter finalization: nothing is left to clean up, and it is where gRPC hangs.
    os._exit(code)
