package sysbench

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tunnelbench/tunnelbench/internal/engine"
)

func f64(v float64) *float64 { return &v }

// pt is a progress report at t seconds.
func pt(t, tps, latencyMs float64) engine.ProgressPoint {
	return engine.ProgressPoint{T: t, TPS: tps, LatencyMs: latencyMs}
}

// little is a closed loop's mean latency in ms, threads ÷ tps, computed as the parser does.
func little(threads, tps float64) float64 { return 1000 * threads / tps }

// per is a mean, sum ÷ n, computed as the parser does.
func per(sum float64, n int64) float64 { return sum / float64(n) }

// The testdata files are real outputs of Debian's sysbench 1.0.20 against MariaDB 10.11.19 on
// this project's machine (stdout and stderr together, as the runner captures them).
func TestParseRecordedOutputs(t *testing.T) {
	tests := []struct {
		file string
		want engine.Result
	}{
		{
			file: "oltp-read-write.txt",
			want: engine.Result{TPS: 240.56, LatencyAvgMs: per(4009.91, 484), Transactions: 484, Clients: 2, Threads: 2,
				DurationSeconds: f64(2.0106), Progress: []engine.ProgressPoint{pt(1, 232.96, little(2, 232.96)), pt(2, 248.58, little(2, 248.58))}},
		},
		{
			// An open loop: no mean latency per interval, and no schedule lag printed.
			file: "oltp-read-only-rate.txt",
			want: engine.Result{TPS: 178.68, LatencyAvgMs: per(16524.11, 359), Transactions: 359, Clients: 1, Threads: 1,
				DurationSeconds: f64(2.0067), Progress: []engine.ProgressPoint{pt(1, 179.86, 0), pt(2, 177.49, 0)}},
		},
		{
			file: "sleep-10ms.txt",
			want: engine.Result{TPS: 87.69, LatencyAvgMs: per(3004.41, 264), Transactions: 264, Clients: 1, Threads: 1,
				DurationSeconds: f64(3.0089), Progress: []engine.ProgressPoint{pt(1, 85.81, little(1, 85.81)), pt(2, 90.03, little(1, 90.03)),
					pt(3, 86.99, little(1, 86.99))}},
		},
		{
			// The latency histogram's lines are no progress and no figure.
			file: "point-select-histogram.txt",
			want: engine.Result{TPS: 22078.28, LatencyAvgMs: per(5969.11, 66509), Transactions: 66509, Clients: 2, Threads: 2,
				DurationSeconds: f64(3.0110), Progress: []engine.ProgressPoint{pt(1, 20470.09, little(2, 20470.09)),
					pt(2, 26055.72, little(2, 26055.72)), pt(3, 19921.41, little(1, 19921.41))}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Parse(openTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(tt.want)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("Parse mismatch\n got: %s\nwant: %s", gotJSON, wantJSON)
			}
		})
	}
}

// TestLittlesLawMatchesTheSummary: in a closed loop, the intervals' threads ÷ tps is the mean
// latency sysbench measured itself over the whole run, within 1 %.
func TestLittlesLawMatchesTheSummary(t *testing.T) {
	for _, file := range []string{"oltp-read-write.txt", "sleep-10ms.txt"} {
		res, err := Parse(openTestdata(t, file))
		if err != nil {
			t.Fatal(err)
		}
		var transactions, weighted float64
		for _, p := range res.Progress {
			transactions += p.TPS
			weighted += p.TPS * p.LatencyMs
		}
		if little := weighted / transactions; math.Abs(little/res.LatencyAvgMs-1) > 0.01 {
			t.Errorf("%s: Little's law gives %.3f ms, sysbench measured %.3f ms", file, little, res.LatencyAvgMs)
		}
	}
}

func TestParseFailedRuns(t *testing.T) {
	tests := []struct {
		file     string
		wantMsg  string
		wantLost bool
	}{
		{"access-denied.txt", "error 1045: Access denied for user 'sbtest'@'127.0.0.1' (using password: YES)", false},
		{"connection-refused.txt", "error 2002: Can't connect to server on '127.0.0.1' (115)", false},
		{"connection-lost.txt", "`thread_run' function failed: /usr/share/sysbench/oltp_common.lua:419: SQL error, " +
			"errno = 2013, state = 'HY000': Lost connection to server during query", true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Parse(openTestdata(t, tt.file))
			if !errors.Is(err, ErrNoSummary) {
				t.Fatalf("Parse error = %v, want ErrNoSummary", err)
			}
			var runErr *engine.RunError
			if !errors.As(err, &runErr) || runErr.LastError != tt.wantMsg {
				t.Fatalf("last error = %q, want %q", runErr.LastError, tt.wantMsg)
			}
			if got := ConnectionLost(runErr.LastError); got != tt.wantLost {
				t.Errorf("ConnectionLost = %v, want %v", got, tt.wantLost)
			}
			out, _ := os.ReadFile(filepath.Join("testdata", tt.file))
			if got := LastError(string(out)); got != tt.wantMsg {
				t.Errorf("LastError = %q", got)
			}
		})
	}
}

// TestParseNonsense: figures out of float64's range, or no figure, never become an infinity.
func TestParseNonsense(t *testing.T) {
	huge := strings.Repeat("9", 400)
	out := "Number of threads: 1\n[ 1s ] thds: 1 tps: " + huge + " qps: 0\n    transactions:   5   (" + huge + " per sec.)\n" +
		"    total time:     " + huge + "s\n"
	res, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("the result cannot be written: %v", err)
	}
	if _, err := Parse(strings.NewReader("")); !errors.Is(err, ErrNoSummary) {
		t.Errorf("empty output: %v", err)
	}
}

func openTestdata(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}
