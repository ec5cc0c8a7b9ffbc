"""Runs one query with a real PySpark Connect client and reports how it failed and how long it took to give up.

Run by RetryContractIT (src/test/java/io/sparkgate/compat) in one of PySparkClient's virtual environments:

    python retry_client.py --host H --port P --ca ca.pem ACTION [--max-retries N --initial-backoff MS
                           --backoff-multiplier X]

ACTION is `range` (spark.range(3).collect(): one ExecutePlan) or `reflect` (a query the shipped policy refuses).
It connects with the URL and CA as pyspark_client.py does (the token from SPARKGATE_COMPAT_TOKEN, the CA through
GRPC_DEFAULT_SSL_ROOTS_FILE_PATH), but builds the Connect session with its constructor,
`pyspark.sql.connect.session.SparkSession(connection=url)`, which sends nothing: the builder's getOrCreate()
in 3.5 sends `spark.remote` as two Config calls (refused by the shipped policy's config-allowlist, shown as a
warning) with the default retry policy, before a policy set on the session could apply. With --max-retries it
sets the client's retry policy the way a user can: from 4.0 on
`spark.client.set_retry_policies([DefaultPolicy(...)])`; 3.5 has no API for it, only the client's
`_retry_policy` dict. Without it, the client's defaults apply.

Prints one line: {"outcome": "ok|error", "millis": ..., "error": "<exception class>", "detail": "<str(e)>"},
where millis is the time from the action's start to its result or its error, and then exits without
stopping the session (a ReleaseSession would be one more call at the proxy).
"""
import argparse
import json
import os
import sys
import time
import warnings

from pyspark_client import TOKEN_ENV


def connect(args):
    os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = args.ca  # before the first secure channel
    from pyspark.sql.connect.session import SparkSession

    url = f"sc://{args.host}:{args.port}/;use_ssl=true;token=" + os.environ[TOKEN_ENV]
    return SparkSession(connection=url)


def set_retries(spark, args):
    settings = {
        "max_retries": args.max_retries,
        "initial_backoff": args.initial_backoff,
        "backoff_multiplier": args.backoff_multiplier,
        "max_backoff": 60000,
    }
    client = spark.client
    if hasattr(client, "set_retry_policies"):
        from pyspark.sql.connect.client.retries import DefaultPolicy

        client.set_retry_policies([DefaultPolicy(**settings)])
        return "set_retry_policies"
    client._retry_policy.update(settings)  # 3.5: the constructor's retry_policy dict, which the builder hides
    return "_retry_policy"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--max-retries", type=int)
    parser.add_argument("--initial-backoff", type=int, default=50)
    parser.add_argument("--backoff-multiplier", type=float, default=4.0)
    parser.add_argument("action", choices=["range", "reflect"])
    args = parser.parse_args()

    spark = connect(args)
    how = set_retries(spark, args) if args.max_retries is not None else "defaults"
    print(f"retry policy: {how}", file=sys.stderr, flush=True)
    warnings.simplefilter("ignore")  # 4.1 warns [RETRIES_EXCEEDED] as it gives up; the error says enough
    started = time.monotonic()
    try:
        if args.action == "range":
            result = spark.range(3).collect()
        else:
            result = spark.sql("SELECT reflect('java.lang.System', 'getProperty', 'user.home')").collect()
        outcome = {"outcome": "ok", "error": "", "detail": str(result)}
    except Exception as e:  # noqa: BLE001 - the error, exactly as the user sees it, is what is measured
        outcome = {"outcome": "error", "error": type(e).__name__, "detail": str(e)}
    outcome["millis"] = int((time.monotonic() - started) * 1000)
    print(json.dumps(outcome), flush=True)
    # No spark.stop(): its ReleaseSession would be one more (and maybe retried) call at the proxy.
    os._exit(0)


if __name__ == "__main__":
    main()
