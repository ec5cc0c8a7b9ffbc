package io.sparkgate.demo;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A short session with the real Spark Connect JVM client, for demo/run.sh. Usage: {@code DemoClient <sc:// url>}.
 * For TLS with a private CA, run it with {@code -Djavax.net.ssl.trustStore=certs/dev/truststore.p12
 * -Djavax.net.ssl.trustStorePassword=changeit} (the client has no trust option of its own) and
 * {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (Arrow).
 */
public final class DemoClient {

  private DemoClient() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: DemoClient sc://host:port/;use_ssl=true");
      System.exit(2);
    }
    String url = args[0];
    System.out.println("Connecting to " + url);
    SparkSession spark = SparkSession.builder().remote(url).getOrCreate();
    try {
      System.out.println();
      System.out.println("spark.version()              = " + spark.version());
      System.out.println("spark.range(1000).count()    = " + spark.range(1000).count());

      String sql = "SELECT id % 3 AS bucket, count(*) AS n, sum(id) AS total FROM range(1000) GROUP BY bucket "
          + "ORDER BY bucket";
      System.out.println();
      System.out.println("spark.sql(\"" + sql + "\").show():");
      spark.sql(sql).show();

      StructType schema = new StructType()
          .add("name", DataTypes.StringType)
          .add("language", DataTypes.StringType)
          .add("year", DataTypes.IntegerType);
      List<Row> rows = List.of(
          RowFactory.create("Ada", "Analytical Engine", 1843),
          RowFactory.create("Grace", "COBOL", 1959),
          RowFactory.create("Martin", "Scala", 2004),
          RowFactory.create("Matei", "Spark", 2009));
      Dataset<Row> df = spark.createDataFrame(rows, schema);
      System.out.println();
      System.out.println("spark.createDataFrame(4 rows).filter(\"year > 1900\").orderBy(\"year\").show():");
      df.filter("year > 1900").orderBy("year").show();

      // What the shipped policy stops: a shell command on the server, and a read of its local files.
      for (String refused : List.of("SELECT TRANSFORM(id) USING 'id -un' AS (who) FROM range(1)",
          "CREATE TEMPORARY VIEW pw USING text OPTIONS (path '/etc/passwd')")) {
        System.out.println();
        System.out.println("spark.sql(\"" + refused + "\"):");
        try {
          spark.sql(refused).collectAsList();
          System.out.println("  NOT refused: the proxy let it through");
        } catch (Exception e) { // AnalysisException, which Scala throws unchecked
          System.out.println("  refused: " + e.getMessage());
        }
      }
    } finally {
      spark.close();
    }
  }
}
