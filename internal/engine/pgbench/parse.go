package pgbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// ErrNoSummary is returned when pgbench's output has no final tps line: pgbench could not connect
// or died before it finished.
var ErrNoSummary = errors.New("pgbench printed no summary")

// ErrAborted is returned when pgbench printed a summary but said the run was aborted, so its
// figures are incomplete.
var ErrAborted = errors.New("pgbench run was aborted")

var (
	reProgress = regexp.MustCompile(`^progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms`)
	reTPS      = regexp.MustCompile(`^tps = ([0-9.]+) \((.+)\)$`)
	reMs       = regexp.MustCompile(`^([0-9.]+) ms`)
	reCount    = regexp.MustCompile(`^([0-9]+)`)
	reLag      = regexp.MustCompile(`^avg ([0-9.]+) \(max ([0-9.]+)\) ms`)
)

// ParseProgress reads one of pgbench's progress lines ("progress: 5.0 s, 1234.5 tps, lat 3.2 ms
// stddev ..."), as it comes, for live figures.
func ParseProgress(line string) (engine.ProgressPoint, bool) {
	m := reProgress.FindStringSubmatch(line)
	if m == nil {
		return engine.ProgressPoint{}, false
	}
	return engine.ProgressPoint{T: atof(m[1]), TPS: atof(m[2]), LatencyMs: atof(m[3])}, true
}

// Parse reads pgbench's combined stdout and stderr.
func Parse(r io.Reader) (*engine.Result, error) {
	res := &engine.Result{Progress: []engine.ProgressPoint{}}
	var haveTPS, aborted bool
	errs := pgbenchErrors
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		errs.Observe(line)
		if line == "pgbench: error: Run was aborted; the above results are incomplete." {
			aborted = true
		}
		if p, ok := ParseProgress(line); ok {
			res.Progress = append(res.Progress, p)
			continue
		}
		if m := reTPS.FindStringSubmatch(line); m != nil {
			haveTPS = true
			parseTPS(res, atof(m[1]), m[2])
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			key, value, ok = strings.Cut(line, " = ")
		}
		if ok {
			parseField(res, key, value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("while reading pgbench output: %w", err)
	}
	switch {
	case aborted:
		return nil, &engine.RunError{Err: ErrAborted, LastError: errs.Last()}
	case !haveTPS:
		return nil, &engine.RunError{Err: ErrNoSummary, LastError: errs.Last()}
	}
	return res, nil
}

func parseTPS(res *engine.Result, tps float64, qualifier string) {
	switch qualifier {
	case "without initial connection time", "excluding connections establishing":
		res.TPS = tps
	case "including reconnection times":
		// pgbench -C reports only this figure: it is both the run's tps and its tps including
		// connection time.
		res.TPS = tps
		res.TPSIncludingConnections = ptr(tps)
	case "including connections establishing":
		res.TPSIncludingConnections = ptr(tps)
	}
}

func parseField(res *engine.Result, key, value string) {
	switch key {
	case "number of clients":
		res.Clients = int32(atoi(value))
	case "number of threads":
		res.Threads = int32(atoi(value))
	case "duration":
		if m := reCount.FindStringSubmatch(value); m != nil {
			res.DurationSeconds = ptr(atof(m[1]))
		}
	case "number of transactions actually processed":
		// "N" for -T runs, "N/M" for -t runs.
		res.Transactions = atoi(value)
	case "number of failed transactions":
		res.FailedTransactions = atoi(value)
	case "number of serialization failures":
		res.SerializationFailures = ptr(atoi(value))
	case "number of deadlock failures":
		res.DeadlockFailures = ptr(atoi(value))
	case "latency average":
		res.LatencyAvgMs = atofMs(value)
	case "latency stddev":
		res.LatencyStddevMs = ptr(atofMs(value))
	case "initial connection time":
		res.ConnectionTimeMs = atofMs(value)
	case "average connection time":
		res.ConnectionTimeMs = atofMs(value)
		res.Reconnect = true
	case "rate limit schedule lag":
		if m := reLag.FindStringSubmatch(value); m != nil {
			openLoop(res).LagAvgMs, openLoop(res).LagMaxMs = atof(m[1]), atof(m[2])
		}
	case "number of transactions skipped":
		openLoop(res).Skipped = atoi(value)
	default:
		// "number of transactions above the 5.0 ms latency limit: N/M (x%)"
		if strings.HasPrefix(key, "number of transactions above the ") && strings.HasSuffix(key, " latency limit") {
			openLoop(res).Late = ptr(atoi(value))
		}
	}
}

// openLoop is res's open-loop account, made on first use: pgbench prints its lines only with -R
// (-L alone prints the late count, which a closed loop also has; it is kept there too).
func openLoop(res *engine.Result) *engine.OpenLoop {
	if res.OpenLoop == nil {
		res.OpenLoop = &engine.OpenLoop{}
	}
	return res.OpenLoop
}

// pgbenchErrors are pgbench's error lines: "pgbench: error:" with libpq's tab-indented second
// lines; genericErrors are follow-ups that say less than the line before them.
var pgbenchErrors = engine.ErrorLines{Prefix: "pgbench: error: ", Continued: true, Generic: []string{
	"Run was aborted",
	"could not create connection for setup",
	"could not create connection for client",
	"could not create connection for initialization",
}}

// LastError returns pgbench's last meaningful error line in output, or "".
func LastError(output string) string { return pgbenchErrors.LastError(output) }

func atofMs(s string) float64 {
	if m := reMs.FindStringSubmatch(s); m != nil {
		return atof(m[1])
	}
	return 0
}

// atof reads a figure; one out of float64's range (a corrupted line: pgbench prints none) reads as
// 0, like an unreadable one, never as an infinity that no JSON status can hold.
func atof(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func atoi(s string) int64 {
	if m := reCount.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	return 0
}

func ptr[T any](v T) *T { return &v }

// connectionLostMarks are what libpq, pgbench and the server say when a session's connection ends
// under it: the server restarted or shut down, or something on the path closed it.
var connectionLostMarks = []string{
	"server closed the connection unexpectedly",
	"perhaps the backend died while processing",
	"terminating connection due to",
	"could not receive data from server",
	"could not send data to server",
	"connection to server was lost",
	"SSL SYSCALL error: EOF detected",
	"SSL connection has been closed unexpectedly",
	"the database system is shutting down",
	"no connection to the server",
}

// ConnectionLost reports whether pgbench's error says its connection to the server was lost.
func ConnectionLost(message string) bool { return engine.ContainsAny(message, connectionLostMarks) }
