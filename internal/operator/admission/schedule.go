package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/cronplan"
)

// ScheduleValidator is the validating webhook of ScheduledTunnelBenchmarks, on create and on
// every update that changes the template or the schedule: the operator creates the schedule's benchmarks itself, so
// the benchmark a schedule would create is checked here, as the user who applies the schedule,
// exactly as that user creating it would be (Validator), and against the TunnelBenchmark's own
// schema and rules (a server-side dry run). Its schedule and time zone must parse.
type ScheduleValidator struct {
	Benchmarks *Validator
	// DryRun creates the template's benchmark in dry-run mode: the operator's client.
	DryRun client.Client
}

var _ admission.Validator[*benchv1.ScheduledTunnelBenchmark] = (*ScheduleValidator)(nil)

// ValidateCreate checks a new schedule.
func (v *ScheduleValidator) ValidateCreate(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark) (admission.Warnings, error) {
	return ScheduleWarnings(stb), v.validate(ctx, stb)
}

// ValidateUpdate checks a schedule whose template or schedule changed; other updates (suspend,
// limits, labels) pass, but for its author record: suspending a schedule asks nothing of the
// benchmark it creates.
func (v *ScheduleValidator) ValidateUpdate(ctx context.Context, old, stb *benchv1.ScheduledTunnelBenchmark) (admission.Warnings, error) {
	if !authoredChange(old, stb) {
		req, err := admission.RequestFromContext(ctx)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("the admission request is not in the context: %w", err))
		}
		return nil, invalidSchedule(stb, forgedAuthor(req, stb))
	}
	return ScheduleWarnings(stb), v.validate(ctx, stb)
}

// ScheduleWarnings are what `kubectl apply` warns of in a schedule it admits: a template whose
// results a schedule cannot use as it promises. They do not refuse it: two short rounds are a
// cheap smoke schedule, whose tps is still judged.
func ScheduleWarnings(stb *benchv1.ScheduledTunnelBenchmark) admission.Warnings {
	spec := &stb.Spec.BenchmarkTemplate.Spec
	var warnings admission.Warnings
	if spec.Sweep != nil {
		warnings = append(warnings, templatePath.Child("sweep").String()+": a sweep's results are not judged "+
			"for regressions (a schedule judges one figure a transport); they are recorded and kept only")
	}
	rounds := spec.Load.Repetitions
	if rounds == 0 {
		rounds = 3
	}
	if rounds < 3 && len(spec.Transports) > 1 {
		warnings = append(warnings, fmt.Sprintf("%s is %d: each result's ratio to the baseline has %s, so "+
			"the schedule's history shows ratios without a usable interval (3 or more give one)",
			templatePath.Child("load", "repetitions"), rounds,
			map[int32]string{1: "no interval", 2: "an interval from 2 paired rounds " +
				"(Student's t of 12.7 on one degree of freedom: 3.6 times as wide as from 3)"}[rounds]))
	}
	return warnings
}

// ValidateDelete admits every deletion.
func (v *ScheduleValidator) ValidateDelete(context.Context, *benchv1.ScheduledTunnelBenchmark) (admission.Warnings, error) {
	return nil, nil
}

// templatePath is where a schedule's benchmark spec sits.
var templatePath = field.NewPath("spec", "benchmarkTemplate", "spec")

func (v *ScheduleValidator) validate(ctx context.Context, stb *benchv1.ScheduledTunnelBenchmark) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("the admission request is not in the context: %w", err))
	}
	errs := forgedAuthor(req, stb)
	if _, err := cronplan.Parse(stb.Spec.Schedule, ptr.Deref(stb.Spec.TimeZone, "")); err != nil {
		path := field.NewPath("spec", "schedule")
		if strings.HasPrefix(err.Error(), "timeZone") {
			path = field.NewPath("spec", "timeZone")
		}
		errs = append(errs, field.Invalid(path, stb.Spec.Schedule, err.Error()))
	}
	refused, err := v.Benchmarks.ScheduleRefusals(ctx, req.UserInfo, stb)
	if err != nil {
		return err
	}
	errs = append(errs, refused...)
	if len(refused) == 0 {
		errs = append(errs, v.dryRun(ctx, scheduleBenchmark(stb))...)
	}
	return invalidSchedule(stb, errs)
}

// invalidSchedule is the refusal of stb for errs; nil without any.
func invalidSchedule(stb *benchv1.ScheduledTunnelBenchmark, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(benchv1.GroupVersion.WithKind("ScheduledTunnelBenchmark").GroupKind(), stb.Name, errs)
}

// ScheduleRefusals are what the policy refuses in the benchmarks stb creates and every access
// they need that user lacks, named at the template's fields, and create tunnelbenchmarks: the
// operator creates the schedule's benchmarks as itself, so a user who may not create one may
// not have the operator create them on a schedule either. The webhook asks it of the user who
// applies the schedule; the schedule's controller of its recorded author before each run.
func (v *Validator) ScheduleRefusals(ctx context.Context, user authenticationv1.UserInfo,
	stb *benchv1.ScheduledTunnelBenchmark) (field.ErrorList, error) {
	refused, err := v.refusals(ctx, user, scheduleBenchmark(stb))
	if err != nil {
		return nil, err
	}
	lacking, err := v.lacking(ctx, user, []Access{{Field: field.NewPath("spec", "benchmarkTemplate"),
		Why: "the operator creates the schedule's benchmarks on their behalf",
		Attributes: authorizationv1.ResourceAttributes{Verb: "create", Group: benchv1.GroupVersion.Group,
			Resource: "tunnelbenchmarks", Namespace: stb.Namespace}}})
	if err != nil {
		return nil, err
	}
	return append(rebase(refused), lacking...), nil
}

// scheduleBenchmark is the benchmark stb's template makes, as the checks see it.
func scheduleBenchmark(stb *benchv1.ScheduledTunnelBenchmark) *benchv1.TunnelBenchmark {
	return &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: stb.Namespace, GenerateName: stb.Name + "-"},
		Spec: *stb.Spec.BenchmarkTemplate.Spec.DeepCopy()}
}

// dryRun asks the API server whether the template is a TunnelBenchmark it admits (its schema and
// CEL rules), and names each refusal at the template's field.
func (v *ScheduleValidator) dryRun(ctx context.Context, tb *benchv1.TunnelBenchmark) field.ErrorList {
	err := v.DryRun.Create(ctx, tb, client.DryRunAll)
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return field.ErrorList{field.Invalid(templatePath, "", "the template is not a TunnelBenchmark the API server admits: "+err.Error())}
	}
	var errs field.ErrorList
	for _, c := range status.Status().Details.Causes {
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: rebaseField(c.Field), BadValue: "", Detail: c.Message})
	}
	return errs
}

// rebase moves errors found on a TunnelBenchmark's spec to the template's.
func rebase(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		c := *e
		c.Field = rebaseField(e.Field)
		out = append(out, &c)
	}
	return out
}

func rebaseField(f string) string {
	if f == "spec" || strings.HasPrefix(f, "spec.") || strings.HasPrefix(f, "spec[") {
		return templatePath.String() + strings.TrimPrefix(f, "spec")
	}
	if f == "" {
		return templatePath.String()
	}
	return f
}

// SchedulePath is where the webhook server serves the schedules' validator; the chart's
// ValidatingWebhookConfiguration names it.
const SchedulePath = "/validate-bench-tunnelbench-io-v1alpha1-scheduledtunnelbenchmark"

// SetupWithManager registers the validator with the manager's webhook server.
func (v *ScheduleValidator) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &benchv1.ScheduledTunnelBenchmark{}).WithValidator(v).
		WithValidatorCustomPath(SchedulePath).Complete()
}
