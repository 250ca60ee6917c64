package report

import (
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

func histogramOf(t *testing.T, n int, micros int64) string {
	t.Helper()
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for range n {
		if err := h.RecordValue(micros); err != nil {
			t.Fatal(err)
		}
	}
	s, err := latency.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMergePods: a run's pods add up to one report: tps and transactions summed, the histograms
// merged (every pod's samples counted), the tunnels listed pod after pod, the window from the first
// start to the last end, bytes summed; the path's details are pod 0's; CPU is left unmeasured.
func TestMergePods(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	pod := func(tps float64, n int, micros int64, start time.Duration) *Report {
		return &Report{
			Result:  &engine.Result{TPS: tps, Transactions: int64(n), LatencyAvgMs: float64(micros) / 1000, Clients: 2},
			Latency: &Latency{Histogram: histogramOf(t, n, micros), SamplingRate: 1, Samples: int64(n)},
			Tunnels: []Tunnel{{Index: 0, TPS: tps / 2}, {Index: 1, TPS: tps / 2}},
			Wire:    &Wire{ReceivedBytes: 1000, SentBytes: 500}, ServerVersion: "15.20",
			StartTime: t0.Add(start), EndTime: t0.Add(start + 4*time.Second),
			CPU: &CPU{UserSeconds: 1},
		}
	}
	pods := []*Report{pod(200, 800, 10_000, 0), pod(198, 792, 10_100, 30*time.Millisecond), pod(201, 804, 9_900, -20*time.Millisecond)}
	got, err := MergePods(pods)
	if err != nil {
		t.Fatal(err)
	}
	if got.Result.TPS != 599 || got.Result.Transactions != 2396 || got.Result.Clients != 6 {
		t.Errorf("result %+v", got.Result)
	}
	if got.Latency == nil || got.Latency.Samples != 2396 {
		t.Errorf("merged histogram %+v, want the pods' 2396 samples", got.Latency)
	}
	if len(got.Tunnels) != 6 || got.Tunnels[5].Index != 5 {
		t.Errorf("tunnels %+v", got.Tunnels)
	}
	if !got.StartTime.Equal(t0.Add(-20*time.Millisecond)) || !got.EndTime.Equal(t0.Add(4030*time.Millisecond)) {
		t.Errorf("window %v – %v", got.StartTime, got.EndTime)
	}
	if got.Wire == nil || got.Wire.ReceivedBytes != 3000 || got.ServerVersion != "15.20" {
		t.Errorf("wire %+v, version %q", got.Wire, got.ServerVersion)
	}
	if got.CPU != nil || len(got.Unmeasured) != 1 || !strings.Contains(got.Unmeasured[0].Reason, "3 runner pods") {
		t.Errorf("CPU %+v, unmeasured %+v", got.CPU, got.Unmeasured)
	}
	pods[1].Wire = nil
	if got, _ := MergePods(pods); got.Wire != nil {
		t.Errorf("bytes summed without one pod's: %+v", got.Wire)
	}
	if _, err := MergePods([]*Report{pods[0], nil}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing pod: %v", err)
	}
}

// TestMergePodsCutToWindow: pods that cut their figures to one common window add up over it — the
// run's tps and transactions are the windows', not pgbench's whole-run figures; pods whose windows
// differ (or one without) leave pgbench's sum.
func TestMergePodsCutToWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	window := func(n int64, end time.Duration) *Window {
		return &Window{Start: t0, End: t0.Add(end), Transactions: n, TPS: float64(n) / end.Seconds()}
	}
	pod := func(w *Window) *Report {
		return &Report{Result: &engine.Result{TPS: 210, Transactions: 840}, Window: w,
			Latency: &Latency{Histogram: histogramOf(t, 790, 10_000), SamplingRate: 1, Samples: 790}}
	}
	tests := []struct {
		name         string
		windows      []*Window
		tps          float64
		transactions int64
	}{
		{"one window", []*Window{window(790, 4*time.Second), window(780, 4*time.Second)}, 392.5, 1570},
		{"windows differ", []*Window{window(790, 4*time.Second), window(780, 3*time.Second)}, 420, 1680},
		{"a pod uncut", []*Window{window(790, 4*time.Second), nil}, 420, 1680},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergePods([]*Report{pod(tt.windows[0]), pod(tt.windows[1])})
			if err != nil {
				t.Fatal(err)
			}
			if got.Result.TPS != tt.tps || got.Result.Transactions != tt.transactions || got.Latency.Samples != 1580 {
				t.Errorf("tps %v, transactions %d, samples %d; want %v, %d, 1580", got.Result.TPS, got.Result.Transactions,
					got.Latency.Samples, tt.tps, tt.transactions)
			}
			if (got.Window != nil) != (tt.name == "one window") {
				t.Errorf("window %+v", got.Window)
			}
		})
	}
}
