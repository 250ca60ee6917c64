package controllers

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

// maxStatusBytes is what this test allows a benchmark's status to grow to from one report: the API
// server refuses a request body over 3 MiB and etcd an object over 1.5 MiB; a benchmark's whole
// status must stay well under either.
const maxStatusBytes = 256 << 10

// FuzzReportIntoStatus: whatever a runner (or an image posing as one) reports, what the operator
// stores from it is a status the API accepts: conditions valid (a message of 40 kB made every
// status write fail, and the benchmark never ended), every event note within the Event API's
// bound, and the status far from the object size limit.
func FuzzReportIntoStatus(f *testing.F) {
	f.Add(`{"command":"pgbench","failure":{"reason":"PgbenchError","message":"ERROR:  invalid input syntax for type integer: \"` +
		strings.Repeat("x", 40000) + `\""}}`)
	f.Add(`{"command":"pgbench","serverVersion":"` + strings.Repeat("15.20 ", 20000) + `",` +
		`"result":{"tps":10,"transactions":100},"tls":{"version":"TLSv1.3","cipher":"` + strings.Repeat("A", 50000) + `"}}`)
	f.Add(`{"failure":{"reason":"\u00ff` + strings.Repeat("é", 20000) + `","message":"\ud800"}}`)
	f.Fuzz(func(t *testing.T, message string) {
		rep, err := report.Decode(message)
		if err != nil {
			return
		}
		recorder := events.NewFakeRecorder(10)
		r := &TunnelBenchmarkReconciler{Recorder: recorder}
		tb := newBenchmark("ns", "fuzz", benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect})
		tb.Generation = 1
		if rep.Result != nil {
			recordRun(tb, 0, tb.Spec.Transports[0], benchv1.RunResult{Round: 1, Job: "j"}, rep, specs.Pod{})
		}
		reason, msg := explainFailedJob(&batchv1.Job{}, rep, nil)
		r.fail(tb, benchv1.ReasonPgbenchError, "transport direct: "+reason+": "+msg)
		if errs := metavalidation.ValidateConditions(tb.Status.Conditions, field.NewPath("status", "conditions")); len(errs) > 0 {
			t.Fatalf("the API would refuse the status: %v", errs.ToAggregate())
		}
		b, err := json.Marshal(tb.Status)
		if err != nil {
			t.Fatalf("status does not marshal: %v", err)
		}
		if len(b) > maxStatusBytes {
			t.Fatalf("status of %d bytes from one report", len(b))
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

// maxEventNote is the events.k8s.io/v1 API's bound on an Event's note.
const maxEventNote = 1024
