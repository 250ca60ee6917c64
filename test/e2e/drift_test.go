//go:build e2e

package e2e

import (
	"testing"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestMachineDrift: only an absolute figure's small alarm, of a transport whose ratio held, passes
// as the machine's drift; the slowed ssh gateway and a moved ratio never do.
func TestMachineDrift(t *testing.T) {
	judged := func(transport, figure string, change int32, regressed bool) benchv1.TransportJudgement {
		return benchv1.TransportJudgement{Transport: transport, Figure: figure, ChangePercent: change, Regressed: regressed}
	}
	for _, tc := range []struct {
		name       string
		judgements []benchv1.TransportJudgement
		want       []string
	}{
		{"tls tps down 22 %, its ratio steady", []benchv1.TransportJudgement{
			judged("tls", "ratio", -2, false), judged("tls", "tps", -22, true)}, []string{"tls/tps"}},
		{"the baseline's tps, which has no ratio", []benchv1.TransportJudgement{
			judged("direct", "tps", -18, true)}, []string{"direct/tps"}},
		{"tls's ratio regressed too", []benchv1.TransportJudgement{
			judged("tls", "ratio", -20, true), judged("tls", "tps", -22, true)}, nil},
		{"a ratio alarm itself", []benchv1.TransportJudgement{judged("tls", "ratio", -20, true)}, nil},
		{"beyond 30 %", []benchv1.TransportJudgement{judged("tls", "tps", -45, true)}, nil},
		{"ssh, the slowed transport", []benchv1.TransportJudgement{
			judged("ssh", "ratio", 0, false), judged("ssh", "tps", -20, true)}, nil},
		{"not regressed", []benchv1.TransportJudgement{judged("tls", "tps", -22, false)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := machineDrift(tc.judgements)
			if len(got) != len(tc.want) {
				t.Fatalf("drift %v, want %v", got, tc.want)
			}
			for _, w := range tc.want {
				if !got[w] {
					t.Errorf("drift %v, want %s in it", got, w)
				}
			}
		})
	}
}
