package controllers

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/report"
	"github.com/tunnelbench/tunnelbench/internal/specs"
)

func TestSummarize(t *testing.T) {
	transports := func(names ...string) []benchv1.TransportSpec {
		var out []benchv1.TransportSpec
		for _, n := range names {
			out = append(out, benchv1.TransportSpec{Name: n, Type: benchv1.TransportDirect})
		}
		return out
	}
	tests := []struct {
		name       string
		transports []string
		tps        map[string]float64
		progress   string
		best       string
		ratios     map[string]float64
	}{
		{"nothing yet", []string{"a", "b"}, nil, "0/2", "", nil},
		{"baseline only", []string{"a", "b"}, map[string]float64{"a": 100}, "1/2", "a", map[string]float64{"a": 1}},
		{"second is faster", []string{"a", "b"}, map[string]float64{"a": 100, "b": 150}, "2/2", "b",
			map[string]float64{"a": 1, "b": 1.5}},
		{"baseline not measured yet has no ratios", []string{"a", "b"}, map[string]float64{"b": 80}, "1/2", "b", nil},
		{"a zero baseline has no ratios", []string{"a", "b"}, map[string]float64{"a": 0, "b": 80}, "2/2", "b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{Transports: transports(tt.transports...)}}
			for _, n := range tt.transports {
				if tps, ok := tt.tps[n]; ok {
					tb.Status.Results = append(tb.Status.Results, benchv1.TransportResult{Transport: n, TPS: tps})
				}
			}
			summarize(tb)
			if tb.Status.Progress != tt.progress {
				t.Errorf("progress %q, want %q", tb.Status.Progress, tt.progress)
			}
			best := ""
			if tb.Status.Best != nil {
				best = tb.Status.Best.Transport
			}
			if best != tt.best {
				t.Errorf("best %q, want %q", best, tt.best)
			}
			for _, r := range tb.Status.Results {
				want, ok := tt.ratios[r.Transport]
				switch {
				case !ok && r.RatioToBaseline != nil:
					t.Errorf("%s: ratio %v, want none", r.Transport, *r.RatioToBaseline)
				case ok && (r.RatioToBaseline == nil || *r.RatioToBaseline != want):
					t.Errorf("%s: ratio %v, want %v", r.Transport, r.RatioToBaseline, want)
				}
			}
		})
	}
}

func TestTransportResult(t *testing.T) {
	stddev := 0.2
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	pod := specs.Pod{Env: []corev1.EnvVar{{Name: "PGHOST", Value: "pg-rw"}, {Name: "PGPORT", Value: "5432"},
		{Name: "PGPASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "password"}}},
		{Name: "PGSSLMODE", Value: "require"}}}
	tests := []struct {
		name  string
		rep   report.Report
		check func(t *testing.T, r benchv1.TransportResult)
	}{
		{"load with TLS", report.Report{
			Result:    &pgbench.Result{TPS: 1000, LatencyAvgMs: 4, LatencyStddevMs: &stddev, Transactions: 10000},
			TLS:       &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"},
			Command:   "pgbench -T 10",
			StartTime: start, EndTime: start.Add(10 * time.Second),
		}, func(t *testing.T, r benchv1.TransportResult) {
			if r.TPS != 1000 || r.TLS == nil || r.TLS.Version != "TLSv1.3" || r.Command != "pgbench -T 10" ||
				r.Connection != "host=pg-rw port=5432 sslmode=require" || r.EndTime.Sub(r.StartTime.Time) != 10*time.Second {
				t.Errorf("result %+v", r)
			}
			if r.ConnectionsPerSecond != nil || r.ConnectionStorm != nil {
				t.Error("no connection figures without reconnect or storm")
			}
		}},
		{"reconnect counts failed transactions as connections", report.Report{
			Result: &pgbench.Result{TPS: 90, Transactions: 900, FailedTransactions: 100, Reconnect: true},
		}, func(t *testing.T, r benchv1.TransportResult) {
			if r.ConnectionsPerSecond == nil || *r.ConnectionsPerSecond != 100 {
				t.Errorf("connections per second %v, want 100", r.ConnectionsPerSecond)
			}
		}},
		{"connection storm", report.Report{
			Result: &pgbench.Result{TPS: 90, Transactions: 900},
			Storm:  &report.Storm{Connections: 1000, PerSecond: 500, MeanConnectMs: 1.5},
		}, func(t *testing.T, r benchv1.TransportResult) {
			s := r.ConnectionStorm
			if s == nil || s.TotalSeconds != 2 || s.MeanConnectionMs != 2 || s.MeanConnectMs != 1.5 {
				t.Errorf("storm %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, transportResult(benchv1.TransportSpec{Name: "x", Type: benchv1.TransportTLS}, "job-x", &tt.rep, pod))
		})
	}
}

func TestProblemReason(t *testing.T) {
	if got := problemReason(&peerProblem{notOwned: true}, benchv1.ReasonPoolerUnavailable); got != benchv1.ReasonOwnershipConflict {
		t.Errorf("someone else's object: %s", got)
	}
	if got := problemReason(&peerProblem{}, benchv1.ReasonPoolerUnavailable); got != benchv1.ReasonPoolerUnavailable {
		t.Errorf("a peer that cannot start: %s", got)
	}
}

func TestExplainFailedJob(t *testing.T) {
	failedJob := func(reason, message string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "b-direct"}, Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message}}}}
	}
	tests := []struct {
		name       string
		job        *batchv1.Job
		rep        *report.Report
		terminated *corev1.ContainerStateTerminated
		reason     string
		contains   []string
	}{
		{"the runner's own classified failure wins", failedJob("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
			&report.Report{Failure: &report.Failure{Reason: benchv1.ReasonAuthenticationFailed, Message: "password authentication failed"}},
			nil, benchv1.ReasonAuthenticationFailed, []string{"password authentication failed"}},
		{"the deadline is the benchmark's timeout", failedJob(batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline"),
			nil, nil, benchv1.ReasonTimeout, []string{"DeadlineExceeded", "raise spec.timeout"}},
		{"killed without a report", failedJob("BackoffLimitExceeded", "Job has reached the specified backoff limit"), nil,
			&corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}, benchv1.ReasonJobFailed,
			[]string{"Job b-direct failed (BackoffLimitExceeded)", "runner container: OOMKilled (exit code 137)"}},
		{"nothing known", &batchv1.Job{}, nil, nil, benchv1.ReasonJobFailed, []string{"failed without a report"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, message := explainFailedJob(tt.job, tt.rep, tt.terminated)
			if reason != tt.reason {
				t.Errorf("reason %s, want %s", reason, tt.reason)
			}
			for _, want := range tt.contains {
				if !strings.Contains(message, want) {
					t.Errorf("message %q lacks %q", message, want)
				}
			}
		})
	}
}
