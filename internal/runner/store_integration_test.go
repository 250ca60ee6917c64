package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/apitest"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
)

// TestResultConfigMap talks to a real kube-apiserver (envtest): the report is stored without
// touching the operator's keys, and the runner waits for the operator's link mark, failing with
// NetworkEmulationFailed when it never comes.
func TestResultConfigMap(t *testing.T) {
	cfg := apitest.Start(t, &envtest.Environment{})
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	configMaps := cs.CoreV1().ConfigMaps("default")
	if _, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-wan-r1"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	results := NewResultConfigMap(configMaps, "bench-wan-r1")

	err := results.AwaitLink(ctx, 300*time.Millisecond, 50*time.Millisecond)
	var fe *FailureError
	if !errors.As(err, &fe) || fe.Reason != benchv1.ReasonNetworkEmulationFailed || !strings.Contains(fe.Message, "within 300ms") {
		t.Fatalf("no mark: %v", err)
	}

	// The operator's mark arrives while the runner waits.
	go func() {
		time.Sleep(200 * time.Millisecond)
		patch := []byte(`{"data":{"` + runspec.LinkInjectedKey + `":"` + runspec.LinkInjected + `"}}`)
		if _, err := configMaps.Patch(ctx, "bench-wan-r1", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Error(err)
		}
	}()
	if err := results.AwaitLink(ctx, 10*time.Second, 50*time.Millisecond); err != nil {
		t.Fatalf("with the mark: %v", err)
	}
	if err := results.Store(ctx, []byte(`{"tps":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := results.StoreLive(ctx, runspec.Live{Phase: runspec.LiveLoad, ElapsedSeconds: 5, TPS: 1234.5}); err != nil {
		t.Fatal(err)
	}
	cm, err := configMaps.Get(ctx, "bench-wan-r1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data[runspec.ResultKey] != `{"tps":1}` || cm.Data[runspec.LinkInjectedKey] != runspec.LinkInjected ||
		!strings.Contains(cm.Data[runspec.LiveKey], `"tps":1234.5`) {
		t.Errorf("data after the store: %v", cm.Data)
	}
	// A ConfigMap that does not exist is waited for like a missing mark, and the failure says why.
	err = NewResultConfigMap(configMaps, "missing").AwaitLink(ctx, 200*time.Millisecond, 50*time.Millisecond)
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "not found") {
		t.Errorf("missing ConfigMap: %v", err)
	}
}
