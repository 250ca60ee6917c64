package admission

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Validator is the validating webhook of TunnelBenchmarks: on create, and on an update that asks
// for more than the benchmark did before, it refuses what the policy refuses and every access the
// requesting user does not hold.
type Validator struct {
	// Client creates SubjectAccessReviews (the operator's role: create subjectaccessreviews).
	Client client.Client
	Policy Policy
}

var _ admission.Validator[*benchv1.TunnelBenchmark] = (*Validator)(nil)

// ValidateCreate checks a new benchmark.
func (v *Validator) ValidateCreate(ctx context.Context, tb *benchv1.TunnelBenchmark) (admission.Warnings, error) {
	return nil, v.validate(ctx, nil, tb)
}

// ValidateUpdate checks only what the new spec asks beyond the old one: removing a finalizer, the
// operator's own update, or cancelling needs nothing new, and a benchmark admitted once is not
// refused later because its creator's rights changed.
func (v *Validator) ValidateUpdate(ctx context.Context, old, tb *benchv1.TunnelBenchmark) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, tb.Spec) {
		return nil, nil
	}
	return nil, v.validate(ctx, old, tb)
}

// ValidateDelete admits every deletion.
func (v *Validator) ValidateDelete(context.Context, *benchv1.TunnelBenchmark) (admission.Warnings, error) {
	return nil, nil
}

func (v *Validator) validate(ctx context.Context, old, tb *benchv1.TunnelBenchmark) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("the admission request is not in the context: %w", err))
	}
	var errs field.ErrorList
	if old == nil || runnerImage(old) != runnerImage(tb) {
		errs = v.Policy.Refusals(tb)
	}
	required, err := Required(tb)
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec"), "", err.Error()))
	}
	required = newSince(old, required)
	for _, a := range required {
		allowed, reason, err := v.allowed(ctx, req.UserInfo, a.Attributes)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("cannot ask the API server whether %s may %s: %w",
				req.UserInfo.Username, a, err))
		}
		if !allowed {
			msg := fmt.Sprintf("user %q may not %s, and %s", req.UserInfo.Username, a, a.Why)
			if reason != "" {
				msg += " (" + reason + ")"
			}
			errs = append(errs, field.Forbidden(a.Field, msg))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(benchv1.GroupVersion.WithKind("TunnelBenchmark").GroupKind(), tb.Name, errs)
}

// newSince drops the accesses old already required: they were checked when old was admitted.
func newSince(old *benchv1.TunnelBenchmark, required []Access) []Access {
	if old == nil {
		return required
	}
	before, err := Required(old)
	if err != nil {
		return required
	}
	var out []Access
	for _, a := range required {
		seen := false
		for _, b := range before {
			seen = seen || b.Attributes == a.Attributes
		}
		if !seen {
			out = append(out, a)
		}
	}
	return out
}

// allowed asks the API server whether user may do attrs (a SubjectAccessReview, which answers
// with the cluster's own authorizers: RBAC, and any webhook authorizer).
func (v *Validator) allowed(ctx context.Context, user authenticationv1.UserInfo,
	attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, val := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(val)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra, ResourceAttributes: &attrs}}
	if err := v.Client.Create(ctx, review); err != nil {
		return false, "", err
	}
	return review.Status.Allowed && !review.Status.Denied, review.Status.Reason, nil
}

func runnerImage(tb *benchv1.TunnelBenchmark) string {
	if tb.Spec.Runner == nil {
		return ""
	}
	return tb.Spec.Runner.Image
}

// Path is where the webhook server serves the validator, as controller-runtime derives it from
// the kind; the chart's ValidatingWebhookConfiguration names it.
const Path = "/validate-bench-tunnelbench-io-v1alpha1-tunnelbenchmark"

// SetupWithManager registers the validator with the manager's webhook server.
func (v *Validator) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &benchv1.TunnelBenchmark{}).WithValidator(v).
		WithValidatorCustomPath(Path).Complete()
}
