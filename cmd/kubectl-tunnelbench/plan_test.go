package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
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
