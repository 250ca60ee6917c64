package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/apitest"
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
	if !errors.As(err, &fe) || fe.Reason != conditions.ReasonNetworkEmulationFailed || !strings.Contains(fe.Message, "within 300ms") {
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

// TestPodsStartTogether: the pods of a run of several mark themselves ready in their result
// ConfigMap and start together at the moment the operator sets once all are; each keeps its report
// under its own key; a pod whose partners never become ready fails, saying so.
func TestPodsStartTogether(t *testing.T) {
	cfg := apitest.Start(t, &envtest.Environment{})
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	configMaps := cs.CoreV1().ConfigMaps("default")
	if _, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-pods-r1"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const pods = 3
	// The operator: once every pod is ready, the start, 300 ms ahead.
	go func() {
		for ctx.Err() == nil {
			cm, err := configMaps.Get(ctx, "bench-pods-r1", metav1.GetOptions{})
			if err == nil && cm.Data[runspec.ReadyKey(0)] != "" && cm.Data[runspec.ReadyKey(1)] != "" &&
				cm.Data[runspec.ReadyKey(2)] != "" {
				cm.Data[runspec.StartKey] = time.Now().Add(300 * time.Millisecond).UTC().Format(time.RFC3339Nano)
				if _, err := configMaps.Update(ctx, cm, metav1.UpdateOptions{}); err == nil {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	started := make([]time.Time, pods)
	errs := make(chan error, pods)
	for i := range pods {
		go func() {
			// The pods become ready at different moments.
			time.Sleep(time.Duration(i) * 150 * time.Millisecond)
			results := NewResultConfigMap(configMaps, "bench-pods-r1").ForPod(pods, i)
			err := results.AwaitStart(ctx, 10*time.Second, 20*time.Millisecond)
			started[i] = time.Now()
			if err == nil {
				err = results.Store(ctx, []byte(`{"command":"pod `+string(rune('0'+i))+`"}`))
			}
			// Their loads covered 1000–2000 µs shifted by 10 µs a pod, and ended 100 ms apart.
			if err == nil {
				time.Sleep(time.Duration(i) * 100 * time.Millisecond)
				shift := int64(10 * i)
				var common latency.Span
				common, err = results.AwaitWindow(ctx, latency.Span{From: 1000 + shift, To: 2000 + shift}, 10*time.Second,
					20*time.Millisecond)
				if want := (latency.Span{From: 1020, To: 2000}); err == nil && common != want {
					err = fmt.Errorf("pod %d: common window %+v, want %+v", i, common, want)
				}
			}
			errs <- err
		}()
	}
	for range pods {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	first, last := started[0], started[0]
	for _, s := range started {
		first, last = minTime(first, s), maxTime(last, s)
	}
	// The last pod was ready 300 ms after the first; all started within a poll of each other.
	if spread := last.Sub(first); spread > 60*time.Millisecond {
		t.Errorf("the pods started %s apart: %v", spread, started)
	}
	cm, err := configMaps.Get(ctx, "bench-pods-r1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		if got := cm.Data[runspec.ReportKey(pods, i)]; !strings.Contains(got, "pod "+string(rune('0'+i))) {
			t.Errorf("pod %d's report: %q", i, got)
		}
	}

	if _, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-alone-r1"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = NewResultConfigMap(configMaps, "bench-alone-r1").ForPod(2, 1).AwaitStart(ctx, 300*time.Millisecond, 50*time.Millisecond)
	var fe *FailureError
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "runner pod 1 of 2 was ready, but the operator did not start") {
		t.Errorf("partners never ready: %v", err)
	}
	_, err = NewResultConfigMap(configMaps, "bench-alone-r1").ForPod(2, 1).AwaitWindow(ctx, latency.Span{From: 1, To: 2},
		300*time.Millisecond, 50*time.Millisecond)
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "not every pod did within 300ms (runner pod 0 has not written its window") {
		t.Errorf("a partner that never ends: %v", err)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
