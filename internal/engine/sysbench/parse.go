package sysbench

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

// ErrNoSummary is returned when sysbench's output has no transactions line: it could not connect,
// or a thread failed and it stopped before its statistics.
var ErrNoSummary = errors.New("sysbench printed no statistics")

var (
	// "[ 1s ] thds: 2 tps: 20470.09 qps: 20470.09 (r/w/o: 20470.09/0.00/0.00) lat (ms,95%): 0.19 err/s: 0.00 reconn/s: 0.00"
	reProgress = regexp.MustCompile(`^\[ *([0-9.]+)s \] thds: ([0-9]+) tps: ([0-9.]+) `)
	// "    transactions:                        66509  (22078.28 per sec.)"
	reCounted = regexp.MustCompile(`^\s+(transactions|ignored errors|reconnects):\s+([0-9]+)\s+\(([0-9.]+) per sec\.\)`)
	reField   = regexp.MustCompile(`^\s*([A-Za-z0-9 ]+):\s+(\S+)`)
)

// ParseProgress reads one of sysbench's interval reports. Its latency is the interval's mean by
// Little's law, threads ÷ tps, which holds for a closed loop (each thread always in a
// transaction); Parse clears it for an open loop, where threads wait for their schedule.
func ParseProgress(line string) (engine.ProgressPoint, bool) {
	m := reProgress.FindStringSubmatch(line)
	if m == nil {
		return engine.ProgressPoint{}, false
	}
	p := engine.ProgressPoint{T: atof(m[1]), TPS: atof(m[3])}
	if threads := atof(m[2]); p.TPS > 0 {
		p.LatencyMs = 1000 * threads / p.TPS
	}
	return p, true
}

// Parse reads sysbench's combined stdout and stderr.
func Parse(r io.Reader) (*engine.Result, error) {
	res := &engine.Result{Progress: []engine.ProgressPoint{}}
	var haveSummary, openLoop bool
	var events int64
	var latencyAvg, latencySum float64
	errs := sysbenchErrors
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		errs.Observe(line)
		if p, ok := ParseProgress(line); ok {
			res.Progress = append(res.Progress, p)
			continue
		}
		if m := reCounted.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			if m[1] == "transactions" {
				haveSummary = true
				res.Transactions, res.TPS = n, atof(m[3])
			}
			continue
		}
		if strings.HasPrefix(line, "Target transaction rate: ") {
			openLoop = true
			continue
		}
		m := reField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch m[1] {
		case "Number of threads":
			threads := int32(atof(m[2]))
			res.Clients, res.Threads = threads, threads
		case "total time":
			res.DurationSeconds = ptr(atof(strings.TrimSuffix(m[2], "s")))
		case "total number of events":
			events, _ = strconv.ParseInt(m[2], 10, 64)
		case "avg":
			latencyAvg = atof(m[2])
		case "sum":
			latencySum = atof(m[2])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("while reading sysbench output: %w", err)
	}
	if !haveSummary {
		return nil, &engine.RunError{Err: ErrNoSummary, LastError: errs.Last()}
	}
	// The avg line has two decimals of a millisecond (±5 % at 0.1 ms); the sum over every event
	// has the same two decimals over a much larger figure.
	res.LatencyAvgMs = latencyAvg
	if events > 0 && latencySum > 0 {
		res.LatencyAvgMs = latencySum / float64(events)
	}
	if openLoop {
		// No account of the schedule either: sysbench prints no lag, and none is invented
		// (Result.OpenLoop stays nil).
		for i := range res.Progress {
			res.Progress[i].LatencyMs = 0
		}
	}
	return res, nil
}

// sysbenchErrors are sysbench's FATAL lines; the generic ones say less than another beside them.
var sysbenchErrors = engine.ErrorLines{Prefix: "FATAL: ", Generic: []string{
	"unable to connect to MySQL server",
	"`thread_init' function failed",
	"Thread initialization failed",
	"(last message repeated",
}}

// LastError returns sysbench's last meaningful FATAL line in output, or "".
func LastError(output string) string { return sysbenchErrors.LastError(output) }

// connectionLostMarks are what the MySQL client library and the server say when a session's
// connection ends under it: CR_SERVER_LOST (2013), CR_SERVER_GONE_ERROR (2006), the server
// shutting down (ER_SERVER_SHUTDOWN, 1053) or killing the connection (ER_CONNECTION_KILLED, 1927).
var connectionLostMarks = []string{
	"Lost connection to server",
	"Lost connection to MySQL server",
	"server has gone away",
	"Server shutdown in progress",
	"Connection was killed",
	"errno = 2013",
	"errno = 2006",
}

// ConnectionLost reports whether sysbench's error says its connection to the server was lost.
func ConnectionLost(message string) bool { return engine.ContainsAny(message, connectionLostMarks) }

// atof reads a figure; one out of float64's range reads as 0, never as an infinity that no JSON
// status can hold.
func atof(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
}

func ptr[T any](v T) *T { return &v }
