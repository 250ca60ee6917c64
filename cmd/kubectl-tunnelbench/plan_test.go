package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestPlanPrecision: a precision target's design, "needs a pilot" without one, and the rounds
// planned from a pilot whose tls runs at 0.7 of direct.
func TestPlanPrecision(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "precise"}}
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct"}, {Name: "tls"}, {Name: "ssh"}}
	tb.Spec.Load.Repetitions = 10
	tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
	text, err := planPrecision(tb, nil)
	if err != nil || !strings.Contains(text, "looks after rounds 3 to 10, each interval at 98.82 %") ||
		!strings.Contains(text, "PLANNED: needs a pilot") {
		t.Errorf("%v: %q", err, text)
	}
	pilot := benchsim.Completed("pilot", []float64{1000, 1100, 900}, []float64{700, 760, 640})
	text, err = planPrecision(tb, pilot)
	// ssh, which the pilot did not run, is planned as an equal of the baseline: to the bound.
	if err != nil || !strings.Contains(text, "tls in pilot: ratio 0.70") || !strings.Contains(text, "PLANNED: 10 rounds") {
		t.Errorf("%v: %q", err, text)
	}
	other := pilot.DeepCopy()
	other.Spec.Transports[0].Name = "pooled"
	if _, err := planPrecision(tb, other); err == nil || !strings.Contains(err.Error(), "same baseline (direct)") {
		t.Errorf("a pilot of another baseline: %v", err)
	}
}
