package benchmark

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

func TestProblemReason(t *testing.T) {
	if got := problemReason(&peerProblem{notOwned: true}, conditions.ReasonPoolerUnavailable); got != conditions.ReasonOwnershipConflict {
		t.Errorf("someone else's object: %s", got)
	}
	if got := problemReason(&peerProblem{}, conditions.ReasonPoolerUnavailable); got != conditions.ReasonPoolerUnavailable {
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
			&report.Report{Failure: &report.Failure{Reason: conditions.ReasonAuthenticationFailed, Message: "password authentication failed"}},
			nil, conditions.ReasonAuthenticationFailed, []string{"password authentication failed"}},
		{"the deadline is the benchmark's timeout", failedJob(batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline"),
			nil, nil, conditions.ReasonTimeout, []string{"DeadlineExceeded", "raise spec.timeout"}},
		{"killed without a report", failedJob("BackoffLimitExceeded", "Job has reached the specified backoff limit"), nil,
			&corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}, conditions.ReasonJobFailed,
			[]string{"Job b-direct failed (BackoffLimitExceeded)", "runner container: OOMKilled (exit code 137)"}},
		{"nothing known", &batchv1.Job{}, nil, nil, conditions.ReasonJobFailed, []string{"failed without a report"}},
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
