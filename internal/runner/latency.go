package runner

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// maxLoggedTransactions bounds the transaction log of one run (about 40 bytes a line, in the
// pod's memory-backed /tmp): beyond it pgbench logs a random sample (--sampling-rate). Half a
// million latencies put the p99.9 on 500 of them.
const maxLoggedTransactions = 500_000

// assumedTPS is the rate the first run of a path is sized for when it has a duration and no
// warm-up: more than this machine's fastest path, so the log stays within bounds whatever the
// path. Later runs are sized by the path's own measured rate.
const assumedTPS = 50_000

// samplingRate is the fraction of transactions to log so that a run logs at most about
// maxLoggedTransactions: exact for a number of transactions, estimated with half as much again to
// spare from the warm-up's tps, else from the path's earlier runs (expectedTPS), else from
// assumedTPS for a duration.
func samplingRate(load runspec.Load, warmTPS, expectedTPS float64) float64 {
	var expected float64
	switch {
	case load.Transactions > 0:
		expected = float64(load.Transactions) * float64(max(load.Clients, 1))
	case warmTPS > 0:
		expected = 1.5 * warmTPS * load.Duration.Seconds()
	case expectedTPS > 0:
		expected = 1.5 * expectedTPS * load.Duration.Seconds()
	default:
		expected = assumedTPS * load.Duration.Seconds()
	}
	if expected <= maxLoggedTransactions {
		return 1
	}
	// Four significant digits are plenty, and keep the flag short.
	rate, _ := strconv.ParseFloat(strconv.FormatFloat(maxLoggedTransactions/expected, 'g', 4, 64), 64)
	return max(rate, 1e-6)
}

// transactionLogs are the per-transaction logs of the measured load generator processes
// (Generator.TransactionLogArgs).
type transactionLogs struct {
	dir  string
	rate float64
}

// newTransactionLogs are the logs of a measured run in dir at a sampling rate, the folder
// emptied; nil when the generator logs no transaction.
func newTransactionLogs(gen engine.Generator, dir string, rate float64) (*transactionLogs, error) {
	if gen.TransactionLogArgs("", 1) == nil {
		return nil, nil
	}
	l := &transactionLogs{dir: dir, rate: rate}
	return l, l.prepare()
}

// prepare empties the folder: a log left by an earlier process must not be counted.
func (l *transactionLogs) prepare() error {
	if err := os.RemoveAll(l.dir); err != nil {
		return fmt.Errorf("cannot clear the transaction logs: %w", err)
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return fmt.Errorf("cannot create the transaction log folder: %w", err)
	}
	return nil
}

// prefix is where process i's logs go.
func (l *transactionLogs) prefix(i int) string {
	return filepath.Join(l.dir, fmt.Sprintf("tunnel-%d", i))
}

// read merges the logs of n processes into one recorder, keeping only the transactions that ended
// within window when it is set.
func (l *transactionLogs) read(n int, window *latency.Span) (*latency.Recorder, error) {
	rec := latency.NewRecorder()
	rec.Window = window
	for i := range n {
		files, err := filepath.Glob(l.prefix(i) + ".*")
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("pgbench wrote no transaction log for process %d in %s", i, l.dir)
		}
		for _, name := range files {
			if err := readLog(rec, name); err != nil {
				return nil, err
			}
		}
	}
	return rec, nil
}

// awaitWindow publishes the stretch a pod's transactions covered and returns the one every pod of
// the run covered (ResultConfigMap.AwaitWindow).
type awaitWindow func(ctx context.Context, covered latency.Span) (latency.Span, error)

// measure reads the logs of n processes into the run's latency distribution and removes them; no
// logs (nil) measure none. For a pod of a run of several (await set) the distribution and the
// pod's Window are cut to the stretch every pod covered, so that the pods' figures add up over
// one window.
func (l *transactionLogs) measure(ctx context.Context, n int, await awaitWindow) (*report.Latency, *report.Window, error) {
	if l == nil {
		return nil, nil, nil
	}
	rec, err := l.read(n, nil)
	if err != nil {
		return nil, nil, err
	}
	var window *report.Window
	if await != nil {
		common, err := await(ctx, rec.Covered)
		if err != nil {
			return nil, nil, err
		}
		if rec, err = l.read(n, &common); err != nil {
			return nil, nil, err
		}
		start, end := common.Times()
		transactions := int64(math.Round(float64(rec.Count()) / l.rate))
		window = &report.Window{Start: start, End: end, Transactions: transactions,
			TPS: float64(transactions) / common.Seconds()}
	}
	encoded, err := rec.Encode()
	if err != nil {
		return nil, nil, err
	}
	if err := os.RemoveAll(l.dir); err != nil {
		return nil, nil, fmt.Errorf("cannot remove the transaction logs: %w", err)
	}
	return &report.Latency{Histogram: encoded, SamplingRate: l.rate, Samples: rec.Count(),
		Failed: rec.Failed, Skipped: rec.Skipped}, window, nil
}

func readLog(rec *latency.Recorder, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("cannot read the transaction log: %w", err)
	}
	defer func() { _ = f.Close() }()
	if err := rec.ReadLog(f); err != nil {
		return fmt.Errorf("transaction log %s: %w", filepath.Base(name), err)
	}
	return nil
}
