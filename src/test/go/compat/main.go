// The compatibility suite's Go client program: runs the scenarios it is given with the Apache Spark Connect Go
// client (github.com/apache/spark-connect-go), in one session, and prints one JSON line per scenario:
// {"scenario": "...", "outcome": "pass|fail|refused|ran|unsupported", "detail": "..."}.
//
// It connects the way a user of the Go client does: an sc:// URL, with ";token=..." when the environment variable
// SPARKGATE_COMPAT_TOKEN holds a token. The
// Go client turns TLS on only when a token is present, with the system roots; a private CA is therefore given
// to it like to any Go program on Linux, with the SSL_CERT_FILE environment variable (set by the caller).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/spark-connect-go/spark/client/options"
	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/apache/spark-connect-go/spark/sql/types"
)

type outcome struct {
	Scenario string `json:"scenario"`
	Outcome  string `json:"outcome"`
	Detail   string `json:"detail"`
}

// largeRows is enough for the shared server's limits (1 s or 1 MiB per response stream) to cut the stream
// several times: 2,000,000 longs are about 16 MB of Arrow.
const largeRows = 2_000_000

type runner struct {
	spark           sql.SparkSession
	url             string
	expectedVersion string
}

// session builds a session with the client's defaults (reattach false: executions are not reattachable, and
// the client neither reattaches nor retries) or with reattachable executions (retries and ReattachExecute on
// errors). The builder has no option for it: it copies the package default when it builds the session.
func session(url string, reattach bool) (sql.SparkSession, error) {
	saved := options.DefaultSparkClientOptions.ReattachExecution
	defer func() { options.DefaultSparkClientOptions.ReattachExecution = saved }()
	options.DefaultSparkClientOptions.ReattachExecution = reattach
	return sql.NewSessionBuilder().Remote(url).Build(context.Background())
}

func main() {
	host := flag.String("host", "127.0.0.1", "server or proxy host")
	port := flag.Int("port", 15002, "server or proxy port")
	scenarios := flag.String("scenarios", "", "comma-separated scenario ids")
	expectedVersion := flag.String("expect-version", "", "the server's Spark version, for the version scenario")
	timeout := flag.Duration("scenario-timeout", 2*time.Minute, "time limit of each scenario")
	reattach := flag.Bool("reattach", false,
		"reattachable executions (the client then retries UNAVAILABLE); the client's default is false")
	flag.Parse()

	url := fmt.Sprintf("sc://%s:%d", *host, *port)
	// The token comes from the environment, not the command line, where other users' ps would show it.
	if token := os.Getenv("SPARKGATE_COMPAT_TOKEN"); token != "" {
		url += "/;token=" + token
	}
	spark, err := session(url, *reattach)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot build a Spark session: %v\n", err)
		os.Exit(2)
	}
	defer spark.Stop()

	r := runner{spark: spark, url: url, expectedVersion: *expectedVersion}
	out := json.NewEncoder(os.Stdout)
	for _, id := range strings.Split(*scenarios, ",") {
		if id == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		o := r.run(ctx, id)
		cancel()
		o.Scenario = id
		if err := out.Encode(o); err != nil {
			fmt.Fprintf(os.Stderr, "cannot write an outcome: %v\n", err)
			os.Exit(2)
		}
	}
}

func (r runner) run(ctx context.Context, id string) outcome {
	switch id {
	case "version":
		return r.version(ctx)
	case "range":
		return r.rangeCount(ctx)
	case "sql":
		return r.sqlGroupBy(ctx)
	case "create_dataframe":
		return r.createDataFrame(ctx)
	case "large_result":
		return r.largeResult(ctx)
	case "interrupt":
		return unsupported("the Go client has no interrupt API (no InterruptAll, InterruptTag or " +
			"InterruptOperation on SparkSession; the Interrupt RPC exists only in its internal generated stub)")
	case "rich_error":
		return r.richError(ctx)
	case "reflect":
		return refusal(r.collectSQL(ctx, "SELECT reflect('java.lang.System', 'getProperty', 'user.home')"))
	case "local_file_read":
		return refusal(r.readLocalFile(ctx))
	case "conf_set":
		err := r.spark.Config().Set(ctx, "spark.sql.artifact.copyFromLocalToFs.allowDestLocal", "true")
		return refusal("the setting was changed", err)
	case "add_artifact":
		return unsupported("the Go client has no artifact API (no AddArtifact(s), AddJar or CopyFromLocalToFs)")
	case "python_udf", "pandas_udf", "udtf", "python_data_source", "map_in_pandas", "foreach_batch":
		return unsupported("Python-only: the Go client cannot define or ship Python code")
	default:
		return outcome{Outcome: "fail", Detail: "unknown scenario id " + id}
	}
}

func (r runner) version(ctx context.Context) outcome {
	// The Go client's SparkSession has no Version(); SELECT version() answers "4.0.0 <git hash>".
	rows, err := r.rows(ctx, "SELECT version()")
	if err != nil {
		return failed(err)
	}
	got, _ := rows[0].At(0).(string)
	if r.expectedVersion != "" && !strings.HasPrefix(got, r.expectedVersion+" ") {
		return outcome{Outcome: "fail", Detail: fmt.Sprintf("version() is %q, expected %s", got, r.expectedVersion)}
	}
	return outcome{Outcome: "pass", Detail: "version() = " + got}
}

func (r runner) rangeCount(ctx context.Context) outcome {
	// The Go client's SparkSession has no Range(); the range table function is the nearest.
	df, err := r.spark.Sql(ctx, "SELECT id FROM range(1000000)")
	if err != nil {
		return failed(err)
	}
	n, err := df.Count(ctx)
	if err != nil {
		return failed(err)
	}
	return expect(n == 1_000_000, fmt.Sprintf("count of range(1000000) = %d", n))
}

func (r runner) sqlGroupBy(ctx context.Context) outcome {
	rows, err := r.rows(ctx, "SELECT id % 3 AS k, count(*) AS n, sum(id) AS s FROM range(300) GROUP BY k ORDER BY k")
	if err != nil {
		return failed(err)
	}
	got := fmt.Sprint(values(rows))
	return expect(got == "[[0 100 14850] [1 100 14950] [2 100 15050]]", "rows "+got)
}

func (r runner) createDataFrame(ctx context.Context) outcome {
	schema := types.StructOf(
		types.NewStructField("id", types.LONG),
		types.NewStructField("name", types.STRING))
	df, err := r.spark.CreateDataFrame(ctx, [][]any{{1, "ada"}, {2, "grace"}, {3, "edsger"}}, schema)
	if err != nil {
		return failed(err)
	}
	df, err = df.FilterByString(ctx, "id >= 2")
	if err != nil {
		return failed(err)
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		return failed(err)
	}
	got := fmt.Sprint(values(rows))
	return expect(got == "[[2 grace] [3 edsger]]", "rows "+got)
}

// largeResult reads a result the server cuts into several response streams, which only reattachable
// executions are; with the client's default (not reattachable) the server sends it in one stream. Both are
// run, and the reattachable one decides: that is the path the scenario is about.
func (r runner) largeResult(ctx context.Context) outcome {
	query := fmt.Sprintf("SELECT id FROM range(%d)", largeRows)
	plain := checkLarge(r.rows(ctx, query))
	reattachable, err := session(r.url, true)
	if err != nil {
		return failed(err)
	}
	defer reattachable.Stop()
	withReattach := checkLarge(runner{spark: reattachable}.rows(ctx, query))
	return outcome{
		Outcome: withReattach.Outcome,
		Detail: fmt.Sprintf("reattachable executions (ReattachExecution=true): %s; "+
			"the client's default (not reattachable): %s: %s",
			withReattach.Detail, plain.Outcome, plain.Detail),
	}
}

func checkLarge(rows []types.Row, err error) outcome {
	if err != nil {
		return failed(err)
	}
	if len(rows) != largeRows {
		return outcome{Outcome: "fail", Detail: fmt.Sprintf("%d rows, expected %d", len(rows), largeRows)}
	}
	for i, row := range rows {
		if id, _ := row.At(0).(int64); id != int64(i) {
			return outcome{Outcome: "fail", Detail: fmt.Sprintf("row %d holds id %v", i, row.At(0))}
		}
	}
	return outcome{Outcome: "pass", Detail: fmt.Sprintf("%d rows, ids 0..%d in order", largeRows, largeRows-1)}
}

func (r runner) richError(ctx context.Context) outcome {
	// spark.sql.ansi.enabled is on the shared policy's list of settings users may change.
	if err := r.spark.Config().Set(ctx, "spark.sql.ansi.enabled", "true"); err != nil {
		return failed(err)
	}
	_, err := r.rows(ctx, "SELECT 1/0")
	if err == nil {
		return outcome{Outcome: "fail", Detail: "SELECT 1/0 returned a row under ANSI mode"}
	}
	msg := err.Error()
	return expect(strings.Contains(msg, "DIVIDE_BY_ZERO") && strings.Contains(msg, "22012"), msg)
}

func (r runner) readLocalFile(ctx context.Context) (string, error) {
	df, err := r.spark.Read().Format("text").Load("/etc/hostname")
	if err != nil {
		return "", err
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(values(rows)), nil
}

// collectSQL runs a query and describes its result, for refusal scenarios that ran.
func (r runner) collectSQL(ctx context.Context, query string) (string, error) {
	rows, err := r.rows(ctx, query)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(values(rows)), nil
}

func (r runner) rows(ctx context.Context, query string) ([]types.Row, error) {
	df, err := r.spark.Sql(ctx, query)
	if err != nil {
		return nil, err
	}
	return df.Collect(ctx)
}

func values(rows []types.Row) [][]any {
	out := make([][]any, len(rows))
	for i, row := range rows {
		out[i] = row.Values()
	}
	return out
}

func expect(ok bool, detail string) outcome {
	if ok {
		return outcome{Outcome: "pass", Detail: detail}
	}
	return outcome{Outcome: "fail", Detail: detail}
}

func failed(err error) outcome {
	return outcome{Outcome: "fail", Detail: err.Error()}
}

func unsupported(why string) outcome {
	return outcome{Outcome: "unsupported", Detail: why}
}

// refusal: the error exactly as the user sees it (err.Error()), or what ran.
func refusal(result string, err error) outcome {
	if err != nil {
		return outcome{Outcome: "refused", Detail: err.Error()}
	}
	return outcome{Outcome: "ran", Detail: result}
}
