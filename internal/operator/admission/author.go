package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// ScheduleAuthor is the mutating webhook of ScheduledTunnelBenchmarks. The operator creates a
// schedule's benchmarks itself, long after the user who applied it was checked; so it records
// who that user is (benchv1.AnnotationAuthor), and the schedule's controller asks, before each
// run, whether that user still may do what the run does (ScheduleRefusals). The author is whoever
// last changed what a run does (authoredChange); any other update keeps the recorded one,
// whatever the request says. The ScheduleValidator refuses any other value, so the record holds
// even without this webhook: it only spares users writing it.
type ScheduleAuthor struct{}

var _ admission.Defaulter[*benchv1.ScheduledTunnelBenchmark] = ScheduleAuthor{}

// Default writes the author the request makes: the requesting user, or the old object's.
func (ScheduleAuthor) Default(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("the admission request is not in the context: %w", err))
	}
	want, err := authorOf(req, stb)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if want == "" {
		delete(stb.Annotations, benchv1.AnnotationAuthor)
		return nil
	}
	if stb.Annotations == nil {
		stb.Annotations = map[string]string{}
	}
	stb.Annotations[benchv1.AnnotationAuthor] = want
	return nil
}

// authorOf is the author annotation stb must carry after req: the requesting user's on a create
// or an authored change, the old object's (possibly none) on any other update.
func authorOf(req admission.Request, stb *benchv1.ScheduledTunnelBenchmark) (string, error) {
	if req.Operation == admissionv1.Update {
		old := &benchv1.ScheduledTunnelBenchmark{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return "", fmt.Errorf("cannot read the schedule before the update: %w", err)
		}
		if !authoredChange(old, stb) {
			return old.Annotations[benchv1.AnnotationAuthor], nil
		}
	}
	return encodeAuthor(req.UserInfo)
}

// authoredChange says whether an update changes what the schedule's runs do or when: its
// template, its schedule or its time zone. Suspending it, its limits, labels or annotations do
// not: they ask nothing of the benchmarks it creates.
func authoredChange(old, stb *benchv1.ScheduledTunnelBenchmark) bool {
	return !equality.Semantic.DeepEqual(old.Spec.BenchmarkTemplate, stb.Spec.BenchmarkTemplate) ||
		old.Spec.Schedule != stb.Spec.Schedule || !equality.Semantic.DeepEqual(old.Spec.TimeZone, stb.Spec.TimeZone)
}

func encodeAuthor(user authenticationv1.UserInfo) (string, error) {
	b, err := json.Marshal(user)
	if err != nil {
		return "", fmt.Errorf("cannot record the requesting user: %w", err)
	}
	return string(b), nil
}

// ErrNoAuthor is RecordedAuthor's answer for a schedule that records none.
var ErrNoAuthor = errors.New("the schedule records no author: it was made before the operator's webhook recorded " +
	"one, or while the webhook was off; apply its spec again (a change to its template, schedule or time zone) to record you")

// RecordedAuthor is the user the webhook recorded as stb's author.
func RecordedAuthor(stb *benchv1.ScheduledTunnelBenchmark) (authenticationv1.UserInfo, error) {
	raw, ok := stb.Annotations[benchv1.AnnotationAuthor]
	if !ok {
		return authenticationv1.UserInfo{}, ErrNoAuthor
	}
	var user authenticationv1.UserInfo
	if err := json.Unmarshal([]byte(raw), &user); err != nil || user.Username == "" {
		return authenticationv1.UserInfo{}, fmt.Errorf("%w (annotation %s does not name a user)", ErrNoAuthor, benchv1.AnnotationAuthor)
	}
	return user, nil
}

// authorPath is the annotation's field, where a refusal of its value is named.
var authorPath = field.NewPath("metadata", "annotations").Key(benchv1.AnnotationAuthor)

// forgedAuthor refuses an author annotation other than the one the request makes: set by hand, or
// by a request the mutating webhook did not see.
func forgedAuthor(req admission.Request, stb *benchv1.ScheduledTunnelBenchmark) field.ErrorList {
	want, err := authorOf(req, stb)
	if err != nil {
		return field.ErrorList{field.InternalError(authorPath, err)}
	}
	if got := stb.Annotations[benchv1.AnnotationAuthor]; got != want {
		return field.ErrorList{field.Forbidden(authorPath, "the operator records who last changed the schedule's template, "+
			"schedule or time zone; no one else may set it")}
	}
	return nil
}

// AuthorPath is where the webhook server serves ScheduleAuthor; the chart's
// MutatingWebhookConfiguration names it.
const AuthorPath = "/mutate-bench-tunnelbench-io-v1alpha1-scheduledtunnelbenchmark"

// SetupWithManager registers the mutating webhook with the manager's webhook server.
func (a ScheduleAuthor) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &benchv1.ScheduledTunnelBenchmark{}).WithDefaulter(a).
		WithDefaulterCustomPath(AuthorPath).Complete()
}
