package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
)

func TestPlan(t *testing.T) {
	sweep := func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2, 4, 8}}
	}
	tx := int32(100)
	tests := []struct {
		name   string
		mutate func(*benchv1.TunnelBenchmark)
		says   []string
		fits   bool
	}{
		{"a sweep", sweep, []string{"4 points of clients (1, 2, 4, 8) × 2 transports × 3 repetitions = 24 runs",
			"each round's 8 runs in a random order", "5s warm-up + 10s load; the runs take at least 6m0s", "spec.timeout is 30m0s"}, true},
		{"too long for its timeout", func(tb *benchv1.TunnelBenchmark) {
			sweep(tb)
			tb.Spec.Timeout = &metav1.Duration{Duration: 5 * time.Minute}
		}, []string{"at least 6m0s"}, false},
		{"transactions", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Duration, tb.Spec.Load.Transactions = nil, &tx },
			[]string{"2 transports × 3 repetitions = 6 runs", "not known before they run"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "scaling"}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct"}, {Name: "ssh"}}
			tb.Spec.Load.Duration = &metav1.Duration{Duration: 10 * time.Second}
			tt.mutate(tb)
			text, fits := plan(tb)
			if fits != tt.fits {
				t.Errorf("fits %v, want %v", fits, tt.fits)
			}
			for _, s := range tt.says {
				if !strings.Contains(text, s) {
					t.Errorf("%q lacks %q", text, s)
				}
			}
		})
	}
}

// TestPlanPrecision: a precision target's design, "needs a pilot" without one, the rounds planned
// from a pilot whose tls runs at 0.7 of direct, and from pilots whose runs carry their own error,
// where that noise sits and the run length that settles a close comparison soonest.
func TestPlanPrecision(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "precise"}}
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct"}, {Name: "tls"}, {Name: "ssh"}}
	tb.Spec.Load.Repetitions = 10
	tb.Spec.Load.Duration = &metav1.Duration{Duration: 10 * time.Second}
	tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
	text, err := planPrecision(tb, nil, "no cluster")
	if err != nil || !strings.Contains(text, "looks after rounds 3 to 10, each interval at 98.82 %") ||
		!strings.Contains(text, "PLANNED: needs a pilot (no cluster)") {
		t.Errorf("%v: %q", err, text)
	}
	pilot := benchsim.Completed("pilot", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	text, err = planPrecision(tb, []*benchv1.TunnelBenchmark{pilot}, "")
	// ssh, which the pilot did not run, is planned as an equal of the baseline: to the bound.
	if err != nil || !strings.Contains(text, "tls in pilot: ratio 0.70") || !strings.Contains(text, "PLANNED: 10 rounds") ||
		!strings.Contains(text, "no error of their own") || strings.Contains(text, "ADVICE") {
		t.Errorf("%v: %q", err, text)
	}

	// A ±3 % question about a path 5 % slower, whose pilots' 5 s runs had 2.5 % of noise each
	// (most of the spread) and cost 10 s each besides: longer runs settle it sooner.
	close := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "close"}}
	close.Spec.Transports = []benchv1.TransportSpec{{Name: "direct"}, {Name: "tls"}}
	close.Spec.Load.Repetitions, close.Spec.Load.Duration = 40, &metav1.Duration{Duration: 5 * time.Second}
	close.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth, HalfWidthPercent: ptr.To[int32](3)}
	// Each pilot's tls alternates 6 % either side of 0.95: a spread of 6.6 % a round, three
	// quarters of it (2 × 4 %²) the runs' own.
	var pilots []*benchv1.TunnelBenchmark
	for i := range 2 {
		var direct, tls []float64
		for r := range 6 {
			direct, tls = append(direct, 1000), append(tls, 950*math.Exp(0.06*float64(1-2*(r%2))))
		}
		p := benchsim.Completed(fmt.Sprintf("pilot-%d", i), direct, tls)
		p.Spec.Load.Duration = &metav1.Duration{Duration: 5 * time.Second}
		benchsim.Timed(p, 4, 10*time.Second)
		pilots = append(pilots, p)
	}
	text, err = planPrecision(close, pilots, "")
	if err != nil || !strings.Contains(text, "tls in pilot-1") ||
		!strings.Contains(text, "spread 6.6 % a round over 6 rounds; 74 % of it within the runs (at 5s a run)") ||
		!strings.Contains(text, "each 10s besides its load") || !strings.Contains(text, "ADVICE: runs of") {
		t.Errorf("%v: %q", err, text)
	}
}

// TestChoosePilots: only completed, interleaved benchmarks of the same setup are pilots, the
// newest first; the load's length and precision target may differ.
func TestChoosePilots(t *testing.T) {
	planned := benchsim.Completed("planned", []float64{1}, []float64{1})
	planned.Status = benchv1.TunnelBenchmarkStatus{}
	planned.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
	planned.Spec.Load.Duration = &metav1.Duration{Duration: 30 * time.Second}
	completedAt := func(tb *benchv1.TunnelBenchmark, hour int) benchv1.TunnelBenchmark {
		tb.Status.CompletionTime = ptr.To(metav1.NewTime(time.Date(2026, 12, 3, hour, 0, 0, 0, time.UTC)))
		return *tb
	}
	older := benchsim.Completed("older", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	newer := benchsim.Completed("newer", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	running := benchsim.Completed("running", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	running.Status.Phase = benchv1.PhaseRunning
	otherBaseline := benchsim.Completed("other-baseline", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	otherBaseline.Spec.Transports[0].Name = "pooled"
	otherLoad := benchsim.Completed("other-load", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	otherLoad.Spec.Load.Clients = 64
	sequential := benchsim.Completed("sequential", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	sequential.Spec.Load.Order = benchv1.OrderSequential
	got := choosePilots(planned, []benchv1.TunnelBenchmark{completedAt(older, 1), completedAt(running, 4),
		completedAt(otherBaseline, 5), completedAt(otherLoad, 6), completedAt(sequential, 7), completedAt(newer, 3)})
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "newer,older" {
		t.Errorf("pilots %v, want newer,older", names)
	}
	for _, tt := range []struct {
		pilot *benchv1.TunnelBenchmark
		says  string
	}{
		{running, "not completed"}, {otherBaseline, "the baseline"}, {otherLoad, "spec.load"}, {sequential, "in sequence"},
	} {
		if why := pilotProblem(planned, tt.pilot); !strings.Contains(why, tt.says) {
			t.Errorf("%s: %q, want %q", tt.pilot.Name, why, tt.says)
		}
	}
}
