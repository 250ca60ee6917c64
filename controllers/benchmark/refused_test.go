package benchmark

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// TestAJobTheAPIRefusesEndsTheBenchmark: a runner whose ephemeral-storage request exceeds its limit
// passes the CRD (its rule compares CPU and memory) and the Job's pod validation refuses it; the
// benchmark ends at once as InvalidSpec, with the API server's words, instead of retrying the
// create until its timeout.
func TestAJobTheAPIRefusesEndsTheBenchmark(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createExternalSecrets(t, ns)
	startOperator(t)
	tb := newBenchmark(ns, "refused")
	useExternalServer(tb)
	tb.Spec.Runner = &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("2Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}}
	if err := testClient.Create(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	done := waitForPhase(t, ns, tb.Name, benchv1.PhaseFailed)
	c := meta.FindStatusCondition(done.Status.Conditions, conditions.Failed)
	if c == nil || c.Reason != conditions.ReasonInvalidSpec || !strings.Contains(c.Message, "the API server refused Job") ||
		!strings.Contains(c.Message, "ephemeral-storage") || !strings.Contains(c.Message, "correct the spec") {
		t.Errorf("Failed condition %+v", c)
	}
	if jobs := listJobs(t, ns); len(jobs) != 0 {
		t.Errorf("%d Jobs exist", len(jobs))
	}
}

func TestRefusedAsInvalid(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "j",
		field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "x", "must be less than or equal to cpu limit")})
	tests := []struct {
		name    string
		err     error
		refused bool
	}{
		{"invalid", invalid, true},
		{"wrapped invalid", errors.Join(errors.New("while creating"), invalid), true},
		{"forbidden by a quota: it may pass later", apierrors.NewForbidden(schema.GroupResource{Resource: "jobs"}, "j",
			errors.New("exceeded quota")), false},
		{"a timeout", apierrors.NewTimeoutError("slow", 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, refused := refusedAsInvalid("Job", "j", tt.err)
			if refused != tt.refused {
				t.Fatalf("refused %v, want %v", refused, tt.refused)
			}
			if refused && (!strings.Contains(why, "Job j") || !strings.Contains(why, "must be less than or equal to cpu limit")) {
				t.Errorf("why: %s", why)
			}
		})
	}
}
