//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

// noSecretsLeak reads everything a user allowed to see a benchmark could read — every event, every
// benchmark's status, every ConfigMap of the namespace, the logs of every container of every
// benchmark's pods and the operator's log — and looks for the database password and any private
// key.
func noSecretsLeak(t *testing.T, ns string, pg *fixture.Postgres) {
	var sources []string
	texts := map[string]string{}
	add := func(what string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		texts[what] = string(b)
		sources = append(sources, what)
	}
	events := &corev1.EventList{}
	benchmarks := &benchv1.TunnelBenchmarkList{}
	configMaps := &corev1.ConfigMapList{}
	for what, l := range map[string]client.ObjectList{"events": events, "benchmarks": benchmarks, "ConfigMaps": configMaps} {
		if err := k8s.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		add(what, l)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(ns), client.HasLabels{benchv1.LabelBenchmark}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out, err := run(t, "kubectl", "logs", "-n", ns, p.Name, "--all-containers")
		if err != nil {
			// A benchmark deleted just before (the Prometheus case's live one) takes its pods,
			// and their logs, with it: nobody can read them any more.
			if getErr := k8s.Get(ctx, client.ObjectKeyFromObject(&p), &corev1.Pod{}); apierrors.IsNotFound(getErr) {
				t.Logf("logs of %s: the pod has gone since it was listed", p.Name)
				continue
			}
			t.Errorf("logs of %s: %v\n%s", p.Name, err, out)
		}
		texts["logs of "+p.Name] = out
	}
	out, err := run(t, "kubectl", "logs", "-n", operatorNamespace, "deploy/"+release, "--all-containers")
	if err != nil {
		t.Errorf("the operator's logs: %v", err)
	}
	texts["the operator's log"] = out
	if len(pods.Items) < 5 || len(events.Items) == 0 || len(configMaps.Items) == 0 {
		t.Fatalf("too little to read: %d pods, %d events, %d ConfigMaps", len(pods.Items), len(events.Items), len(configMaps.Items))
	}
	for what, text := range texts {
		for _, secret := range []string{pg.AppPassword, "PRIVATE KEY"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains %s", what, map[bool]string{true: "the database password", false: "a private key"}[secret == pg.AppPassword])
			}
		}
	}
	t.Logf("read %d pods' logs, %d events, %d benchmarks, %d ConfigMaps and the operator's log: no password, no private key",
		len(pods.Items), len(events.Items), len(benchmarks.Items), len(configMaps.Items))
}

// operatorNeverRestarted: no container of the operator restarted during the whole suite (a lost
// leader lease on a saturated node ends in a restart). A pod chaos-mesh killed on purpose is
// replaced by a new pod, whose count starts at 0.
func operatorNeverRestarted(t *testing.T) {
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": "tunnelbench", "app.kubernetes.io/instance": release}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatal("no operator pod")
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount > 0 {
				last := ""
				if term := cs.LastTerminationState.Terminated; term != nil {
					last = fmt.Sprintf(" (last: %s, exit %d, %s)", term.Reason, term.ExitCode, term.Message)
				}
				t.Errorf("the operator's container %s in %s restarted %d times%s", cs.Name, p.Name, cs.RestartCount, last)
			}
		}
	}
}
