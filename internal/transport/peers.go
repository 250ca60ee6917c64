package transport

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kinds of peers, for Register.
var (
	DeploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")
	ServiceKind    = corev1.SchemeGroupVersion.WithKind("Service")
)

// forbiddenPods is a Deployment's ReplicaFailure that will not pass by itself: the namespace's Pod
// Security level refuses the pod (a privileged transport in a restricted namespace). A quota that
// refuses it may free up: that one waits for the progress deadline.
func forbiddenPods(cond appsv1.DeploymentCondition) bool {
	return cond.Type == appsv1.DeploymentReplicaFailure && cond.Status == corev1.ConditionTrue &&
		strings.Contains(cond.Message, "violates PodSecurity")
}

// DeploymentReady is ready once one of the operator's Deployments has an available replica; a pod
// of it that cannot start by itself (an image that cannot be pulled) is a problem, reported
// without waiting for the timeout.
func DeploymentReady(what string) Readiness {
	return func(ctx context.Context, c Cluster, stored client.Object) (Status, error) {
		dep, ok := stored.(*appsv1.Deployment)
		if !ok {
			return Status{}, fmt.Errorf("%s: unexpected type %T", what, stored)
		}
		if dep.Status.AvailableReplicas >= 1 {
			return Status{Ready: true}, nil
		}
		trouble := c.PodTrouble(ctx, dep.Spec.Selector.MatchLabels, what)
		if trouble.Problem != "" {
			return trouble, nil
		}
		for _, cond := range dep.Status.Conditions {
			if forbiddenPods(cond) {
				return Status{Problem: fmt.Sprintf("%s cannot create its pod: %s (the namespace's Pod Security level "+
					"refuses it: a privileged transport runs only in a namespace labelled "+
					"pod-security.kubernetes.io/enforce=privileged)", what, cond.Message)}, nil
			}
			if cond.Type == appsv1.DeploymentProgressing && cond.Status == corev1.ConditionFalse &&
				cond.Reason == "ProgressDeadlineExceeded" {
				problem := fmt.Sprintf("%s did not become available within its progress deadline (%ds): %s", what,
					ptr.Deref(dep.Spec.ProgressDeadlineSeconds, 600), cond.Message)
				if trouble.Waiting != "" {
					problem += "; " + trouble.Waiting
				}
				return Status{Problem: problem}, nil
			}
		}
		return trouble, nil
	}
}
