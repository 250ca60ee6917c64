package benchmark

import (
	"strings"
	"testing"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/results"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/operator/statusguard"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// fuzzTransports is one transport of every registered type (both VPN kinds), so that every
// transport's own recording (Transport.Record, Describe) meets the report.
func fuzzTransports() []benchv1.TransportSpec {
	var out []benchv1.TransportSpec
	for _, typ := range transport.Types() {
		t := benchv1.TransportSpec{Name: string(typ), Type: typ}
		out = append(out, t)
		if typ == benchv1.TransportVPN {
			out = append(out, benchv1.TransportSpec{Name: "openvpn", Type: typ, VPN: &benchv1.VPNTransport{Kind: benchv1.VPNOpenVPN}})
		}
	}
	return out
}

// FuzzReportIntoStatus: whatever a runner (or an image posing as one, or anyone who may edit the
// run's result ConfigMap) reports, the status the operator builds from it — every transport's
// recording, the cost parts, the unmeasured parts and the limiter, the summaries, a failure — is
// one the API server accepts once fitted (statusguard.Fit: the CRD's own structural schema, list
// types and CEL rules), without ending the benchmark as InvalidResult for a text of any length;
// and every event note is within the Event API's bound. An 80-character part name once left a
// benchmark Running forever, its every status write refused.
func FuzzReportIntoStatus(f *testing.F) {
	f.Add(`{"command":"pgbench","failure":{"reason":"PgbenchError","message":"ERROR:  invalid input syntax for type integer: \"` +
		strings.Repeat("x", 5000) + `\""}}`)
	f.Add(`{"command":"pgbench","serverVersion":"` + strings.Repeat("15.20 ", 300) + `",` +
		`"result":{"tps":10,"transactions":100},"tls":{"version":"TLSv1.3","cipher":"` + strings.Repeat("A", 2000) + `"}}`)
	f.Add(`{"failure":{"reason":"\u00ff` + strings.Repeat("é", 3000) + `","message":"\ud800"}}`)
	f.Add(`{"command":"pgbench","result":{"tps":10,"transactions":100,"latencyAvgMs":1},` +
		`"cpu":{"userSeconds":1,"systemSeconds":1,"windowSeconds":2},` +
		`"sidecars":[{"part":"` + strings.Repeat("tunnel-", 12) + `","cpu":{"userSeconds":2,"windowSeconds":2}}],` +
		`"unmeasured":[{"part":"` + strings.Repeat("u", 80) + `","reason":"` + strings.Repeat("r", 400) + `"}]}`)
	f.Add(`{"command":"pgbench","result":{"tps":10,"transactions":100},` +
		`"ssh":{"cipher":"` + strings.Repeat("c", 3000) + `","mac":"` + strings.Repeat("m", 3000) + `"},` +
		`"tunnels":[{"index":0,"tps":5,"transactions":50}],` +
		`"pooler":{"counted":true,"transactions":100,"clientTLS":{"version":"` + strings.Repeat("v", 500) + `"}},` +
		`"probes":[{"part":"` + strings.Repeat("p", 300) + `","error":"` +
		strings.Repeat("lookup gw.example.invalid: no such host ", 20) + `"}]}`)
	// Threads a runner made up: shares past float64's range, negative, a part name too long for the
	// budget, more threads than an int32 holds.
	f.Add(`{"command":"pgbench","result":{"tps":1000,"transactions":2000,"latencyAvgMs":1,"clients":8},` +
		`"cpu":{"user":1,"window":2,"threads":{"window":2,"onCPU":1.7e308,"waited":1.7e308,"busiest":-1,"n":99999999999}},` +
		`"sidecars":[{"part":"` + strings.Repeat("tunnel-", 12) + `","cpu":{"user":2,"window":2,` +
		`"threads":{"window":2,"onCPU":1.9,"waited":0.1,"busiest":1.9,"n":1}}},{"part":"server","cpu":{"user":2,"window":2,` +
		`"threads":{"window":1e-300,"onCPU":-4,"waited":2,"busiest":5,"n":-3}}}]}`)
	// Figures past float64's range: their sums and spreads are not finite.
	f.Add(`{"command":"pgbench","result":{"tps":1.7e308,"transactions":9000000000000000000,"latencyAvgMs":1.7e308,"clients":4}}`)
	transports := fuzzTransports()
	f.Fuzz(func(t *testing.T, message string) {
		rep, err := report.Decode(message)
		if err != nil {
			return
		}
		recorder := events.NewFakeRecorder(100)
		r := &TunnelBenchmarkReconciler{Recorder: statusguard.Recorder(recorder)}
		tb := newBenchmark("ns", "fuzz", transports...)
		tb.Generation = 1
		tb.Spec.Load.Repetitions = 2
		stored := tb.DeepCopy()
		if rep.Result != nil {
			// Two rounds of each, so that the summaries over rounds (means, spreads) are made.
			for round := int32(1); round <= tb.Repetitions(); round++ {
				for i, spec := range tb.Spec.Transports {
					tr, err := transport.For(transport.Context{Benchmark: tb, Spec: spec})
					if err != nil {
						t.Fatal(err)
					}
					measured := benchv1.RunResult{Round: round, Job: "j"}
					costs, limiter := fuzzCost(tb, rep)
					measured.Cost, measured.Unmeasured, measured.Budget, measured.Limiter = costs.parts, costs.unmeasured, costs.budget, limiter
					result := results.Record(tb, 0, tb.Spec.Transports[i], measured, rep, specs.Pod{})
					tr.Record(rep, result)
					result.Path = bounded.Text(tr.Describe(result), benchv1.MaxPathDescription)
				}
			}
			results.Summarize(tb)
		}
		if errs := statusguard.Fit(tb); len(errs) > 0 {
			// Only nonsense no cut can mend (a figure past float64's range) may be refused, and
			// then the benchmark still ends: InvalidResult, with a status the API accepts.
			for _, e := range errs {
				if e.Type == field.ErrorTypeTooLong {
					t.Fatalf("a text was refused instead of cut: %v", e)
				}
			}
			r.refuseStatus(tb, stored, errs.ToAggregate().Error())
			if errs := statusguard.Fit(tb); len(errs) > 0 {
				t.Fatalf("the refused pass's end is refused too: %v", errs.ToAggregate())
			}
			if c := meta.FindStatusCondition(tb.Status.Conditions, conditions.Failed); c == nil || c.Reason != conditions.ReasonInvalidResult {
				t.Fatalf("a refused status did not end the benchmark as InvalidResult: %+v", tb.Status.Conditions)
			}
		}
		reason, msg := explainFailedJob(&batchv1.Job{}, rep, nil)
		r.fail(tb, conditions.ReasonPgbenchError, "transport direct: "+reason+": "+msg)
		if errs := statusguard.Fit(tb); len(errs) > 0 {
			t.Fatalf("the API would refuse the failed status: %v", errs.ToAggregate())
		}
		for _, e := range r.pending.take(types.NamespacedName{Namespace: "ns", Name: "fuzz"}) {
			e.record()
			// The fake recorder prints "type reason note".
			note := strings.SplitN(<-recorder.Events, " ", 3)[2]
			if len(note) > maxEventNote || !utf8.ValidString(note) {
				t.Fatalf("an event note of %d bytes (valid UTF-8: %v)", len(note), utf8.ValidString(note))
			}
		}
	})
}

// fuzzCost is runCost's pure part on a report (the node's cores and the pods' limits, which runCost
// reads from the API, fixed), the budget of a closed loop included.
func fuzzCost(tb *benchv1.TunnelBenchmark, rep *report.Report) (runCosts, *benchv1.Limiter) {
	var seen []partSeen
	if rep.CPU != nil {
		seen = append(seen, partSeen{name: benchv1.PartClient, cpu: rep.CPU, cores: 2, local: true})
	}
	for _, s := range rep.Sidecars {
		seen = append(seen, partSeen{name: s.Part, cpu: &s.CPU, cores: 2, local: true})
	}
	return decideCosts(rep, seen, "n1", 2, results.CycleMs(tb, rep.Result), func(parts []benchv1.PartCost) []benchv1.UnmeasuredPart {
		return unmeasuredParts(rep, parts, serverView{}, func(serverView) (runspec.CPUPart, string) {
			return runspec.CPUPart{}, "not asked"
		})
	})
}

// maxEventNote is the events.k8s.io/v1 API's bound on an Event's note.
const maxEventNote = 1024
