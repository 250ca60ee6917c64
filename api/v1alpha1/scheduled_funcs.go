package v1alpha1

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"
)

const (
	// LabelSchedule names, on a benchmark a schedule created, the ScheduledTunnelBenchmark.
	LabelSchedule = "tunnelbench.io/schedule"
	// LabelTemplateHash is, on a benchmark a schedule created, its template's hash: the series
	// its results belong to.
	LabelTemplateHash = "tunnelbench.io/template-hash"
	// AnnotationScheduledAt is when the run was due (RFC 3339).
	AnnotationScheduledAt = "tunnelbench.io/scheduled-at"
	// AnnotationAuthor is, on a schedule, who last wrote its spec (JSON of the user's name, UID,
	// groups and extra, as the API server authenticated them): the operator's admission webhook
	// writes it on every create and every update that changes the template, the schedule or its
	// time zone, keeps it on every other update, and refuses any other value. Before each run the
	// operator asks the API server whether that user still may do everything the run would
	// (the Authorized condition).
	AnnotationAuthor = "tunnelbench.io/author"
	// AnnotationRunSeal is, on a benchmark a schedule created, the operator's proof that it did
	// (internal/operator/runseal): only a benchmark whose seal matches joins the schedule's history and
	// judgements, whatever its labels and owner say.
	AnnotationRunSeal = "tunnelbench.io/run-seal"
)

// Defaults of a ScheduledTunnelBenchmark, written once: the CRD's defaults say the same.
const (
	DefaultStartingDeadline          = 300 * time.Second
	DefaultSuccessfulBenchmarksLimit = 3
	DefaultFailedBenchmarksLimit     = 1
	DefaultRegressionWindow          = 10
	DefaultMinEffectPercent          = 10
)

// TemplateHash identifies the template's spec: 16 hex digits of FNV-1a over its JSON. Results
// are judged against those of the same hash only: another load or server is another series.
func (s *ScheduledTunnelBenchmark) TemplateHash() string {
	b, err := json.Marshal(s.Spec.BenchmarkTemplate.Spec)
	if err != nil {
		// A spec always marshals; a panic here would be a bug in the types.
		panic(fmt.Sprintf("the template's spec does not marshal: %v", err))
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

// Policy is the concurrency policy, Forbid when unset.
func (s *ScheduledTunnelBenchmark) Policy() ConcurrencyPolicy {
	if s.Spec.ConcurrencyPolicy == "" {
		return ConcurrencyForbid
	}
	return s.Spec.ConcurrencyPolicy
}

// StartingDeadline is how late a run may start.
func (s *ScheduledTunnelBenchmark) StartingDeadline() time.Duration {
	if s.Spec.StartingDeadlineSeconds == nil {
		return DefaultStartingDeadline
	}
	return time.Duration(*s.Spec.StartingDeadlineSeconds) * time.Second
}

// Limits are how many completed and how many failed or cancelled benchmarks to keep.
func (s *ScheduledTunnelBenchmark) Limits() (succeeded, failed int) {
	succeeded, failed = DefaultSuccessfulBenchmarksLimit, DefaultFailedBenchmarksLimit
	if s.Spec.SuccessfulBenchmarksHistoryLimit != nil {
		succeeded = int(*s.Spec.SuccessfulBenchmarksHistoryLimit)
	}
	if s.Spec.FailedBenchmarksHistoryLimit != nil {
		failed = int(*s.Spec.FailedBenchmarksHistoryLimit)
	}
	return succeeded, failed
}

// RegressionWindow and MinEffect are the regression rule's window and minimum effect (a fraction).
func (s *ScheduledTunnelBenchmark) RegressionWindow() int {
	if r := s.Spec.Regression; r != nil && r.Window != nil {
		return int(*r.Window)
	}
	return DefaultRegressionWindow
}

// MinEffect is the smallest change called a regression, as a fraction of the reference level.
func (s *ScheduledTunnelBenchmark) MinEffect() float64 {
	if r := s.Spec.Regression; r != nil && r.MinEffectPercent != nil {
		return float64(*r.MinEffectPercent) / 100
	}
	return DefaultMinEffectPercent / 100.0
}

// Suspended says whether new runs are stopped.
func (s *ScheduledTunnelBenchmark) Suspended() bool {
	return s.Spec.Suspend != nil && *s.Spec.Suspend
}
