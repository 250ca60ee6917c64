package transport

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// quietCluster has no pod in trouble.
type quietCluster struct{}

func (quietCluster) Get(context.Context, string, client.Object) error { return nil }
func (quietCluster) PodTrouble(context.Context, map[string]string, string) Status {
	return Status{}
}
func (quietCluster) Now() time.Time { return time.Now() }

// TestDeploymentReadyFailsAtOnceOnPodSecurity: a gateway whose pod the namespace's Pod Security
// level refuses fails at once, saying so; a quota's refusal may pass and waits.
func TestDeploymentReadyFailsAtOnceOnPodSecurity(t *testing.T) {
	for _, tc := range []struct {
		message string
		problem bool
	}{
		{`pods "tb-openvpn-gateway-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`, true},
		{`pods "tb-openvpn-gateway-x" is forbidden: exceeded quota: pods`, false},
	} {
		dep := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{}},
			Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure,
				Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: tc.message}}}}
		s, err := DeploymentReady("the OpenVPN gateway")(context.Background(), quietCluster{}, dep)
		if err != nil || (s.Problem != "") != tc.problem {
			t.Errorf("%q: status %+v (%v), want a problem: %v", tc.message, s, err, tc.problem)
		}
		if tc.problem && !strings.Contains(s.Problem, "pod-security.kubernetes.io/enforce=privileged") {
			t.Errorf("the problem does not say what to do: %s", s.Problem)
		}
	}
}
