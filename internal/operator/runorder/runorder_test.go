package runorder

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// render writes a schedule as "A1 B1 ...".
func render(runs []Run) string {
	var out []string
	for _, p := range runs {
		out = append(out, fmt.Sprintf("%c%d", 'A'+p.Transport, p.Round))
	}
	return strings.Join(out, " ")
}

// TestScheduleShape: interleaved rounds are each a permutation of the transports, in round order;
// sequential runs each transport's rounds together; every run is planned exactly once.
func TestScheduleShape(t *testing.T) {
	tests := []struct {
		transports int
		rounds     int32
		order      benchv1.RunOrder
	}{
		{3, 2, benchv1.OrderInterleaved},
		{3, 2, benchv1.OrderSequential},
		{2, 1, benchv1.OrderInterleaved},
		{1, 3, benchv1.OrderInterleaved},
		{16, 20, benchv1.OrderInterleaved},
		{16, 20, benchv1.OrderSequential},
		{2, 3, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d×%d %s", tt.transports, tt.rounds, tt.order), func(t *testing.T) {
			for seed := range int64(50) {
				runs := Order(1, tt.transports, tt.rounds, tt.order, seed)
				if len(runs) != tt.transports*int(tt.rounds) {
					t.Fatalf("seed %d: %d runs, want %d", seed, len(runs), tt.transports*int(tt.rounds))
				}
				seen := map[Run]bool{}
				for i, p := range runs {
					if seen[p] {
						t.Fatalf("seed %d: %s planned twice in %s", seed, render([]Run{p}), render(runs))
					}
					seen[p] = true
					switch {
					case tt.order == benchv1.OrderSequential:
						if i > 0 && p.Transport != runs[i-1].Transport && p.Round != 1 {
							t.Fatalf("seed %d: sequential order interleaves: %s", seed, render(runs))
						}
					case p.Round != int32(i/tt.transports)+1:
						t.Fatalf("seed %d: run %d is of round %d in %s", seed, i, p.Round, render(runs))
					}
				}
				if again := Order(1, tt.transports, tt.rounds, tt.order, seed); !slices.Equal(again, runs) {
					t.Fatalf("seed %d gives %s, then %s", seed, render(runs), render(again))
				}
			}
		})
	}
}

// TestScheduleIsRandom: over many seeds each transport runs first in about a third of the rounds
// of three (the baseline is not favoured), and a recorded seed keeps its order: seed 42's order is
// written down here, so a change of the shuffle, which would make recorded seeds lie, fails.
func TestScheduleIsRandom(t *testing.T) {
	first := make([]int, 3)
	const seeds = 3000
	for seed := range int64(seeds) {
		for _, p := range Order(1, 3, 5, benchv1.OrderInterleaved, seed) {
			if p.Round == 1 {
				first[p.Transport]++
				break
			}
		}
	}
	for i, n := range first {
		// 1000 expected; the binomial's standard deviation is 26, so ±130 is five of them.
		if n < seeds/3-130 || n > seeds/3+130 {
			t.Errorf("transport %d runs first in %d of %d benchmarks, want about %d", i, n, seeds, seeds/3)
		}
	}
	if got, want := render(Order(1, 3, 2, benchv1.OrderInterleaved, 42)), "C1 B1 A1 A2 C2 B2"; got != want {
		t.Errorf("seed 42: %s, want %s (the recorded order of a seed must not change)", got, want)
	}
	if a, b := render(Order(1, 4, 3, benchv1.OrderInterleaved, 1)), render(Order(1, 4, 3, benchv1.OrderInterleaved, 2)); a == b {
		t.Errorf("seeds 1 and 2 give the same order %s", a)
	}
}

// TestPlannedOrder: status records the seed (spec's, or the UID's) and each round's names.
func TestPlannedOrder(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{
		Load:       benchv1.LoadSpec{Repetitions: 2, Seed: ptr.To[int64](42)},
		Transports: []benchv1.TransportSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}},
	}}
	got := Planned(tb)
	if got.Seed != 42 || got.Order != benchv1.OrderInterleaved || strings.Join(got.Rounds, "|") != "c b a|a c b" {
		t.Errorf("interleaved: %+v", got)
	}
	tb.Spec.Load.Order = benchv1.OrderSequential
	if got := Planned(tb); len(got.Rounds) != 1 || len(strings.Fields(got.Rounds[0])) != 3 {
		t.Errorf("sequential: %+v", got)
	}
	tb.Spec.Load.Seed, tb.UID = nil, "0b7c3e4e-1d9a-4b8e-9a51-3f1f5d2e8c11"
	uid := Seed(tb)
	tb.UID = "5f0d7a1c-2b7e-4d3a-8c1e-9e2b4a6f7d20"
	if other := Seed(tb); uid == other || uid < 0 || uid > maxSeed || other < 0 || other > maxSeed {
		t.Errorf("seeds from UIDs: %d and %d", uid, other)
	}
}

// TestNextRun resumes where the recorded results stop, in either order, following the schedule.
func TestNextRun(t *testing.T) {
	tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{
		Load:       benchv1.LoadSpec{Repetitions: 2, Seed: ptr.To[int64](7)},
		Transports: []benchv1.TransportSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}},
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
		var got []Run
		for {
			p, ok := Next(tb)
			if !ok {
				break
			}
			got = append(got, p)
			record(tb.Spec.Transports[p.Transport].Name, p.Round)
		}
		if want := Order(1, 3, 2, order, 7); !slices.Equal(got, want) {
			t.Errorf("%s: runs %s, want %s", order, render(got), render(want))
		}
	}
}

// TestSweepSchedule: a sweep's round runs every (point, transport) once, each round in its own
// order; sequential runs one (point, transport)'s rounds together; the points move around (no
// point always first). One point is a benchmark without a sweep, whose order TestScheduleIsRandom
// pins.
func TestSweepSchedule(t *testing.T) {
	const points, transports, rounds = 4, 3, 5
	firstPoint := map[int]int{}
	for seed := range int64(200) {
		runs := Order(points, transports, rounds, benchv1.OrderInterleaved, seed)
		if len(runs) != points*transports*rounds {
			t.Fatalf("%d runs", len(runs))
		}
		seen := map[Run]bool{}
		for i, p := range runs {
			if seen[p] || p.Round != int32(i/(points*transports))+1 || p.Point >= points || p.Transport >= transports {
				t.Fatalf("seed %d: run %d %+v", seed, i, p)
			}
			seen[p] = true
		}
		firstPoint[runs[0].Point]++
		seq := Order(points, transports, rounds, benchv1.OrderSequential, seed)
		for i, p := range seq {
			if i%rounds != 0 && (p.Point != seq[i-1].Point || p.Transport != seq[i-1].Transport || p.Round != seq[i-1].Round+1) {
				t.Fatalf("seed %d: sequential sweep interleaves at %d: %+v after %+v", seed, i, p, seq[i-1])
			}
		}
	}
	for point := range points {
		// 200 rounds' first runs over 4 points: about 50 each.
		if n := firstPoint[point]; n < 25 || n > 80 {
			t.Errorf("point %d ran first in %d of 200 sweeps", point, n)
		}
	}
}
