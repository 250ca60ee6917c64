package admission

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Validator is the validating webhook of TunnelBenchmarks, called on create only: the spec is
// immutable but for spec.cancel (the CRD's rules), so an update asks for nothing new, and a webhook
// on updates would hold every finalizer while the operator is down (a namespace stuck in
// Terminating). It refuses what the policy refuses and every access the requesting user lacks.
type Validator struct {
	// Client creates SubjectAccessReviews (the operator's role: create subjectaccessreviews).
	Client client.Client
	Policy Policy
}

var _ admission.Validator[*benchv1.TunnelBenchmark] = (*Validator)(nil)

// ValidateCreate checks a new benchmark.
func (v *Validator) ValidateCreate(ctx context.Context, tb *benchv1.TunnelBenchmark) (admission.Warnings, error) {
	return nil, v.validate(ctx, tb)
}

// ValidateUpdate admits every update: the webhook is not called for them (see Validator).
func (v *Validator) ValidateUpdate(context.Context, *benchv1.TunnelBenchmark, *benchv1.TunnelBenchmark) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete admits every deletion.
func (v *Validator) ValidateDelete(context.Context, *benchv1.TunnelBenchmark) (admission.Warnings, error) {
	return nil, nil
}

func (v *Validator) validate(ctx context.Context, tb *benchv1.TunnelBenchmark) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("the admission request is not in the context: %w", err))
	}
	errs, err := v.refusals(ctx, req.UserInfo, tb)
	if err != nil {
		return err
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(benchv1.GroupVersion.WithKind("TunnelBenchmark").GroupKind(), tb.Name, errs)
}

// refusals are what the policy refuses in tb and every access it needs that user lacks.
func (v *Validator) refusals(ctx context.Context, user authenticationv1.UserInfo, tb *benchv1.TunnelBenchmark) (field.ErrorList, error) {
	errs := v.Policy.Refusals(tb)
	required, err := Required(tb)
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec"), "", err.Error()))
	}
	lacking, err := v.lacking(ctx, user, required)
	if err != nil {
		return nil, err
	}
	return append(errs, lacking...), nil
}

// lacking is each access of required that user does not hold, named at its field.
func (v *Validator) lacking(ctx context.Context, user authenticationv1.UserInfo, required []Access) (field.ErrorList, error) {
	var errs field.ErrorList
	for _, a := range required {
		allowed, reason, err := v.allowed(ctx, user, a.Attributes)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("cannot ask the API server whether %s may %s: %w",
				user.Username, a, err))
		}
		if !allowed {
			msg := fmt.Sprintf("user %q may not %s, and %s", user.Username, a, a.Why)
			if reason != "" {
				msg += " (" + reason + ")"
			}
			errs = append(errs, field.Forbidden(a.Field, msg))
		}
	}
	return errs, nil
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

// Path is where the webhook server serves the validator, as controller-runtime derives it from
// the kind; the chart's ValidatingWebhookConfiguration names it.
const Path = "/validate-bench-tunnelbench-io-v1alpha1-tunnelbenchmark"

// SetupWithManager registers the validator with the manager's webhook server.
func (v *Validator) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &benchv1.TunnelBenchmark{}).WithValidator(v).
		WithValidatorCustomPath(Path).Complete()
}
