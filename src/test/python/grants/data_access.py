"""Data access grants through Sparkgate with PySpark: each team's own work passes, the other team's table is
refused in every form PySpark sends it (SQL, USE then an unqualified name, DataFrame reads and writes, the
Catalog API, views, AnalyzePlan).

Run by DataAccessIT in a virtual environment holding PySpark. Users and their tables come as arguments
(--user alice:finance.payroll:marketing.leads); each user's token comes from SPARKGATE_TOKEN_<NAME>. One JSON
line per form: {"user", "form", "expect" (allow|deny), "needle" (what a refusal must name), "ok", "value" or
"error"}.
"""

import argparse
import json
import os
import sys


def forms(spark, name, own, other):
    """(form, expect, needle, function) for one user: own and other are 'namespace.table'."""
    own_ns, own_t = own.split(".")
    other_ns, other_t = other.split(".")

    def use_then_unqualified():
        spark.sql(f"USE {other_ns}")
        try:
            return spark.sql(f"SELECT * FROM {other_t}").collect()
        finally:
            spark.sql(f"USE {own_ns}")

    def use_own_then_unqualified():
        spark.sql(f"USE {own_ns}")
        try:
            return spark.sql(f"SELECT count(*) FROM {own_t}").first()[0]
        finally:
            spark.sql("USE default")

    def own_temp_view():
        spark.table(own).createOrReplaceTempView("py_mine")
        return spark.sql("SELECT count(*) FROM py_mine").first()[0]

    return [
        ("read own table", "allow", None, lambda: spark.table(own).count()),
        ("USE own namespace then an unqualified name", "allow", None, use_own_then_unqualified),
        ("insertInto own table", "allow", None,
         lambda: spark.createDataFrame([(100, 1)], "id BIGINT, amount BIGINT").write.insertInto(own)),
        ("saveAsTable into own scratch", "allow", None,
         lambda: spark.range(3).withColumnRenamed("id", "x").write.mode("overwrite")
         .saveAsTable(f"scratch_{name}.py_work")),
        ("read own scratch", "allow", None, lambda: spark.table(f"scratch_{name}.py_work").count()),
        ("read shared", "allow", None, lambda: spark.sql("SELECT count(*) FROM shared.calendar").first()[0]),
        ("temp view over own table", "allow", None, own_temp_view),
        ("columns of own table (AnalyzePlan)", "allow", None, lambda: spark.table(own).columns),
        ("SQL SELECT", "deny", other, lambda: spark.sql(f"SELECT * FROM {other}").collect()),
        ("USE then an unqualified name", "deny", other, use_then_unqualified),
        ("spark.table", "deny", other, lambda: spark.table(other).collect()),
        ("spark.read.table", "deny", other, lambda: spark.read.table(other).collect()),
        ("columns (AnalyzePlan)", "deny", other, lambda: spark.table(other).columns),
        ("schema (AnalyzePlan)", "deny", other, lambda: spark.read.table(other).schema.simpleString()),
        ("insertInto", "deny", other,
         lambda: spark.createDataFrame([(7, 7)], "id BIGINT, amount BIGINT").write.insertInto(other)),
        ("saveAsTable", "deny", f"{other_ns}.py_stolen",
         lambda: spark.range(1).write.saveAsTable(f"{other_ns}.py_stolen")),
        ("catalog.listTables", "deny", other_ns, lambda: spark.catalog.listTables(other_ns)),
        ("catalog.getTable", "deny", other, lambda: spark.catalog.getTable(other).name),
        ("catalog.tableExists", "deny", other, lambda: spark.catalog.tableExists(other)),
        ("catalog.listColumns", "deny", other, lambda: spark.catalog.listColumns(other)),
        ("CREATE VIEW over it", "deny", other,
         lambda: spark.sql(f"CREATE VIEW {own_ns}.py_leak AS SELECT * FROM {other}").collect()),
        ("CREATE TEMP VIEW over it", "deny", other,
         lambda: spark.sql(f"CREATE TEMP VIEW py_leak AS SELECT * FROM {other}").collect()),
        ("createOrReplaceTempView over it", "deny", other,
         lambda: spark.table(other).createOrReplaceTempView("py_leak2")),
    ]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--user", action="append", required=True, help="name:own_table:other_table")
    args = p.parse_args()
    os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = args.ca
    from pyspark.sql import SparkSession

    for spec in args.user:
        name, own, other = spec.split(":")
        token = os.environ["SPARKGATE_TOKEN_" + name.upper()]
        spark = SparkSession.builder.remote(f"sc://{args.target}/;use_ssl=true;token={token}").create()
        for form, expect, needle, run in forms(spark, name, own, other):
            out = {"user": name, "form": form, "expect": expect, "needle": needle}
            try:
                out.update(ok=True, value=str(run())[:500])
            except Exception as e:  # the client's error, as the user sees it
                out.update(ok=False, error=str(e)[:2000])
            print(json.dumps(out), flush=True)
        spark.stop()
    sys.stdout.flush()
    # PySpark's exit hooks can hang in gRPC's Channel.close (NewProtocolIT): leave without them.
    os._exit(0)


if __name__ == "__main__":
    main()
