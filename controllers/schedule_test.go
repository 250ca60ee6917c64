package controllers

import (
	"fmt"
	"strings"
	"testing"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		transports int
		rounds     int32
		order      benchv1.RunOrder
		want       string
	}{
		{3, 2, benchv1.OrderInterleaved, "A1 B1 C1 A2 B2 C2"},
		{3, 2, benchv1.OrderSequential, "A1 A2 B1 B2 C1 C2"},
		{2, 1, benchv1.OrderInterleaved, "A1 B1"},
		{1, 3, benchv1.OrderInterleaved, "A1 A2 A3"},
		{2, 3, "", "A1 B1 A2 B2 A3 B3"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d×%d %s", tt.transports, tt.rounds, tt.order), func(t *testing.T) {
			var got []string
			for _, p := range schedule(tt.transports, tt.rounds, tt.order) {
				got = append(got, fmt.Sprintf("%c%d", 'A'+p.transport, p.round))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("schedule = %s, want %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// TestNextRun resumes where the recorded results stop, in either order.
func TestNextRun(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{
		Load:       benchv1.LoadSpec{Repetitions: 2},
		Transports: []benchv1.TransportSpec{{Name: "a"}, {Name: "b"}},
	}}
	record := func(name string, reps int32) {
		if r := tb.Status.Result(name); r != nil {
			r.Repetitions = reps
			return
		}
		tb.Status.Results = append(tb.Status.Results, benchv1.TransportResult{Transport: name, Repetitions: reps})
	}
	for _, order := range []benchv1.RunOrder{benchv1.OrderInterleaved, benchv1.OrderSequential} {
		tb.Spec.Load.Order, tb.Status.Results = order, nil
		var got []string
		for {
			p, ok := nextRun(tb)
			if !ok {
				break
			}
			name := tb.Spec.Transports[p.transport].Name
			got = append(got, fmt.Sprintf("%s%d", name, p.round))
			record(name, p.round)
		}
		want := map[benchv1.RunOrder]string{benchv1.OrderInterleaved: "a1 b1 a2 b2", benchv1.OrderSequential: "a1 a2 b1 b2"}[order]
		if strings.Join(got, " ") != want {
			t.Errorf("%s: runs %s, want %s", order, strings.Join(got, " "), want)
		}
	}
}
