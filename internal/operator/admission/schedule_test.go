package admission

import (
	"strings"
	"testing"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestScheduleWarnings: a schedule whose rounds give its ratios no usable interval, or whose
// sweep is never judged, is warned of at apply; the default template is not.
func TestScheduleWarnings(t *testing.T) {
	two := []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}, {Name: "tls", Type: benchv1.TransportTLS}}
	tests := []struct {
		name        string
		transports  []benchv1.TransportSpec
		repetitions int32
		sweep       *benchv1.SweepSpec
		want        []string
	}{
		{"the default three rounds", two, 0, nil, nil},
		{"three rounds", two, 3, nil, nil},
		{"two rounds", two, 2, nil, []string{"spec.benchmarkTemplate.spec.load.repetitions is 2", "Student's t of 12.7"}},
		{"one round", two, 1, nil, []string{"load.repetitions is 1: each result's ratio to the baseline has no interval"}},
		{"one round of one transport: no ratio", two[:1], 1, nil, nil},
		{"a sweep", two, 3, &benchv1.SweepSpec{Clients: []int32{1, 2}},
			[]string{"spec.benchmarkTemplate.spec.sweep: a sweep's results are not judged"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stb := &benchv1.ScheduledTunnelBenchmark{}
			stb.Spec.BenchmarkTemplate.Spec.Transports = tc.transports
			stb.Spec.BenchmarkTemplate.Spec.Load.Repetitions = tc.repetitions
			stb.Spec.BenchmarkTemplate.Spec.Sweep = tc.sweep
			got := strings.Join(ScheduleWarnings(stb), "\n")
			if (got == "") != (len(tc.want) == 0) {
				t.Fatalf("warnings %q, want %q", got, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("warnings %q, want %q", got, w)
				}
			}
		})
	}
}
