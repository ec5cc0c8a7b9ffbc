"""Data access grants through Sparkgate with PySpark on a lakehouse server (Spark 3.5.7 with Hudi and Iceberg):
each team creates and works on its own Iceberg and Hudi tables, then is refused the other team's in every form
PySpark sends a table name (SQL, spark.table, the DataFrame reader, AnalyzePlan, writes, the Catalog API and,
for Iceberg, its metadata tables).

Run by DataAccessIT in a virtual environment holding PySpark 3.5. Each --case is user:own_table:other_table
with catalog-qualified names (iceberg.finance.t, spark_catalog.finance.t; the catalog says Iceberg or Hudi);
each user's token comes from SPARKGATE_TOKEN_<NAME>. Every user's own forms run first, so that the other
team's tables exist when a user is refused them. One JSON line per form: {"user", "form", "expect"
(allow|deny), "needle" (what a refusal must name), "want" (the value an allowed form must return, or null),
"ok", "value" or "error"}.
"""

import argparse
import json
import os
import sys


def own_forms(spark, own):
    """(form, expect, needle, want, function): the owner creates, writes and reads its table."""
    catalog, ns, table = own.split(".")
    iceberg = catalog == "iceberg"
    create = (f"CREATE TABLE {own} (id BIGINT, amount BIGINT) USING iceberg" if iceberg else
              f"CREATE TABLE {own} (id BIGINT, amount BIGINT, ts BIGINT) USING hudi "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'cow')")
    row = "(1, 10)" if iceberg else "(1, 10, 1)"
    forms = [
        ("DROP TABLE IF EXISTS own", "allow", None, None, lambda: spark.sql(f"DROP TABLE IF EXISTS {own}")),
        ("CREATE TABLE own", "allow", None, None, lambda: spark.sql(create)),
        ("SQL INSERT into own", "allow", None, None, lambda: spark.sql(f"INSERT INTO {own} VALUES {row}")),
    ]
    if iceberg:
        forms.append(("insertInto own", "allow", None, None,
                      lambda: spark.createDataFrame([(2, 20)], "id BIGINT, amount BIGINT")
                      .write.insertInto(own)))
    rows = "2" if iceberg else "1"
    forms += [
        ("SQL SELECT own", "allow", None, rows, lambda: spark.sql(f"SELECT count(*) FROM {own}").first()[0]),
        ("spark.table own", "allow", None, rows, lambda: spark.table(own).count()),
        ("spark.read.table own", "allow", None, rows, lambda: spark.read.table(own).count()),
        ("columns of own (AnalyzePlan)", "allow", None, None, lambda: spark.table(own).columns),
        ("catalog.tableExists own", "allow", None, "True", lambda: spark.catalog.tableExists(own)),
        ("catalog.listTables own namespace", "allow", None, "True",
         lambda: table in [t.name for t in spark.catalog.listTables(f"{catalog}.{ns}")]),
    ]
    if iceberg:
        forms += [
            ("SQL own .snapshots", "allow", None, "2",
             lambda: spark.sql(f"SELECT count(*) FROM {own}.snapshots").first()[0]),
            ("spark.table own .history", "allow", None, "2", lambda: spark.table(f"{own}.history").count()),
        ]
    return forms


def other_forms(spark, other):
    """(form, expect, needle, want, function): everything another team tries on the table is refused."""
    catalog, ns, _ = other.split(".")
    iceberg = catalog == "iceberg"
    row = "(7, 7)" if iceberg else "(7, 7, 7)"
    forms = [
        ("SQL SELECT", "deny", other, None, lambda: spark.sql(f"SELECT * FROM {other}").collect()),
        ("spark.table", "deny", other, None, lambda: spark.table(other).collect()),
        ("spark.read.table", "deny", other, None, lambda: spark.read.table(other).count()),
        ("columns (AnalyzePlan)", "deny", other, None, lambda: spark.read.table(other).columns),
        ("SQL INSERT", "deny", other, None, lambda: spark.sql(f"INSERT INTO {other} VALUES {row}")),
        ("catalog.tableExists", "deny", other, None, lambda: spark.catalog.tableExists(other)),
        ("catalog.listTables", "deny", f"{catalog}.{ns}", None,
         lambda: spark.catalog.listTables(f"{catalog}.{ns}")),
    ]
    if iceberg:
        forms += [
            ("insertInto", "deny", other, None,
             lambda: spark.createDataFrame([(7, 7)], "id BIGINT, amount BIGINT").write.insertInto(other)),
            ("SQL .snapshots", "deny", other, None,
             lambda: spark.sql(f"SELECT * FROM {other}.snapshots").collect()),
            ("spark.table .history", "deny", other, None, lambda: spark.table(f"{other}.history").collect()),
        ]
    return forms


def run(spark, name, table, forms):
    for form, expect, needle, want, fn in forms:
        out = {"user": name, "form": f"{form} ({table})", "expect": expect, "needle": needle, "want": want}
        try:
            out.update(ok=True, value=str(fn())[:500])
        except Exception as e:  # the client's error, as the user sees it
            out.update(ok=False, error=str(e)[:2000])
        print(json.dumps(out), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--case", action="append", required=True, help="name:own_table:other_table")
    args = p.parse_args()
    os.environ["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = args.ca
    from pyspark.sql import SparkSession

    cases = [spec.split(":") for spec in args.case]
    sessions = {}
    for name, _, _ in cases:
        if name not in sessions:
            token = os.environ["SPARKGATE_TOKEN_" + name.upper()]
            sessions[name] = SparkSession.builder.remote(
                f"sc://{args.target}/;use_ssl=true;token={token}").create()
    for name, own, _ in cases:
        run(sessions[name], name, own, own_forms(sessions[name], own))
    for name, _, other in cases:
        run(sessions[name], name, other, other_forms(sessions[name], other))
    sys.stdout.flush()
    # PySpark's exit hooks can hang in gRPC's Channel.close (NewProtocolIT): leave without them.
    os._exit(0)


if __name__ == "__main__":
    main()
