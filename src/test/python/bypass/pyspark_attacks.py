"""Ways around Sparkgate's reading of strings, tried with PySpark (the DataFrame forms only PySpark sends).

Run by PySparkBypassIT in a virtual environment holding PySpark. Each attack runs twice: against the bare
Spark Connect server, where it must work (a Java call's answer, the server's environment in a value or an
error message), and through Sparkgate, where it must be refused. One JSON line per run:
{"attack", "target" (direct|proxy), "ok", "value" or "error"}. The token comes from SPARKGATE_TOKEN.
"""

import argparse
import json
import os
import sys


def attacks(F):
    """name -> function(spark) returning a string the test compares (or raising)."""
    java = "java_method('java.lang.System','getProperty','user.home')"
    return {
        "selectExpr comment swallowed by substitution": lambda s: s.range(1).selectExpr(
            "'${a'--'}'||" + java).first()[0],
        "filter block comment swallowed by substitution": lambda s: str(s.range(1).filter(
            "'${x'/*'}'='' AND " + java + " IS NOT NULL --*/").count()),
        "expr() in select reads the environment": lambda s: s.range(1).select(
            F.expr("'${env:HOME}'")).first()[0],
        "expr() in agg and orderBy": lambda s: str(len(s.range(2).groupBy().agg(
            F.expr("max('${a'--'}'||id)")).orderBy(F.expr("'${a'--'}'||" + java)).collect())),
        "cast type string leaks through the error": lambda s: s.range(1).select(
            F.col("id").cast("${env:HOME}")).first()[0],
        "createDataFrame schema comment": lambda s: s.createDataFrame(
            [("x",)], "a string comment '${system:user.name}'").schema.fields[0].metadata.get("comment"),
        "SQL reads a system property": lambda s: s.sql("SELECT '${system:user.name}'").first()[0],
    }


def connect(url):
    from pyspark.sql import SparkSession
    return SparkSession.builder.remote(url).create()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--direct", required=True)
    p.add_argument("--proxy", required=True)
    p.add_argument("--ca", required=True)
    args = p.parse_args()
    # gRPC's C core reads this once, before the first secure channel.
    os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = args.ca
    from pyspark.sql import functions as F

    token = os.environ["SPARKGATE_TOKEN"]
    sessions = {
        "direct": connect(f"sc://{args.direct}/"),
        "proxy": connect(f"sc://{args.proxy}/;use_ssl=true;token={token}"),
    }
    for name, attack in attacks(F).items():
        for target, spark in sessions.items():
            try:
                out = {"attack": name, "target": target, "ok": True, "value": str(attack(spark))}
            except Exception as e:  # the client's error, as the user sees it
                out = {"attack": name, "target": target, "ok": False, "error": str(e)[:2000]}
            print(json.dumps(out), flush=True)
    for spark in sessions.values():
        spark.stop()
    sys.stdout.flush()
    # PySpark's exit hooks can hang in gRPC's Channel.close (NewProtocolIT): leave without them.
    os._exit(0)


if __name__ == "__main__":
    main()
