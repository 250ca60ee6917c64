package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// storeAttempts and storeBackoff bound the retries of a report write: the API server of a node
// saturated by the benchmark answers slowly, and losing a finished run to one slow answer would
// throw away its measurement.
const (
	storeAttempts = 6
	storeBackoff  = time.Second
	storeTimeout  = 15 * time.Second
)

// ResultConfigMap is the run's result ConfigMap in the pod's namespace, which the operator created,
// empty, before the pod. The runner's ServiceAccount may get and patch that ConfigMap and nothing
// else; its credentials are mounted at runspec.APIAccessPath.
type ResultConfigMap struct {
	name       string
	configMaps corev1client.ConfigMapInterface
	// pods and index are this pod's place in a run of several (runspec.Run.Pods): they decide its
	// keys.
	pods, index int
}

// ForPod is the ConfigMap as pod index of pods writes it: its report and live progress under keys
// of its own (runspec.ReportKey, runspec.LiveKeyOf).
func (c *ResultConfigMap) ForPod(pods, index int) *ResultConfigMap {
	out := *c
	out.pods, out.index = pods, index
	return &out
}

// OpenResultConfigMap reaches the result ConfigMap name with the pod's API credentials.
func OpenResultConfigMap(name string) (*ResultConfigMap, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes API access to store the report: %w", err)
	}
	cfg.UserAgent = "tunnelbench-runner"
	ns, err := os.ReadFile(filepath.Join(runspec.APIAccessPath, "namespace"))
	if err != nil {
		return nil, fmt.Errorf("cannot read the pod's namespace: %w", err)
	}
	client, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return NewResultConfigMap(client.ConfigMaps(strings.TrimSpace(string(ns))), name), nil
}

// NewResultConfigMap is the result ConfigMap name reached through configMaps.
func NewResultConfigMap(configMaps corev1client.ConfigMapInterface, name string) *ResultConfigMap {
	return &ResultConfigMap{name: name, configMaps: configMaps}
}

// Store keeps the report under runspec.ReportKey (ResultKey for a run of one pod), retrying
// (storeAttempts) a slow API server.
func (c *ResultConfigMap) Store(ctx context.Context, report []byte) error {
	if err := c.patch(ctx, runspec.ReportKey(c.pods, c.index), string(report)); err != nil {
		return fmt.Errorf("cannot store the report in ConfigMap %s: %w", c.name, err)
	}
	return nil
}

// patch sets one key, retrying (storeAttempts) a slow API server.
func (c *ResultConfigMap) patch(ctx context.Context, key, value string) error {
	patch, err := json.Marshal(map[string]any{"data": map[string]string{key: value}})
	if err != nil {
		return err
	}
	wait := storeBackoff
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, storeTimeout)
		_, err = c.configMaps.Patch(callCtx, c.name, types.MergePatchType, patch, metav1.PatchOptions{})
		cancel()
		if err == nil || attempt == storeAttempts || ctx.Err() != nil {
			break
		}
		time.Sleep(wait)
		wait *= 2
	}
	return err
}

// StoreLive keeps the run's live progress under runspec.LiveKey: one attempt, bounded, since the
// next progress report replaces a lost one.
func (c *ResultConfigMap) StoreLive(ctx context.Context, l runspec.Live) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"data": map[string]string{runspec.LiveKeyOf(c.pods, c.index): string(b)}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	_, err = c.configMaps.Patch(ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// await reads the ConfigMap every `every` for at most `wait` until found, given its data, says
// that what is awaited is there (or fails). A failed read is retried like a missing key; when the
// wait ends first, timedOut is true and lastErr the last read's error (or found's last word).
func (c *ResultConfigMap) await(ctx context.Context, wait, every time.Duration,
	found func(data map[string]string) (bool, error)) (timedOut bool, lastErr error, err error) {
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		callCtx, callCancel := context.WithTimeout(waitCtx, storeTimeout)
		cm, getErr := c.configMaps.Get(callCtx, c.name, metav1.GetOptions{})
		callCancel()
		if getErr != nil {
			lastErr = getErr
		} else if ok, err := found(cm.Data); err != nil || ok {
			return false, nil, err
		}
		select {
		case <-waitCtx.Done():
			return ctx.Err() == nil, lastErr, ctx.Err()
		case <-time.After(every):
		}
	}
}

// lastRead is the end of a timeout's message: what the last read said, if anything.
func lastRead(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(" (last read: %v)", err)
}

// AwaitLink waits until the operator marks the emulated link as in place (runspec.AwaitLink),
// reading the ConfigMap every `every` for at most `wait`: the operator, not the runner, judges the
// emulator.
func (c *ResultConfigMap) AwaitLink(ctx context.Context, wait, every time.Duration) error {
	timedOut, lastErr, err := c.await(ctx, wait, every, func(data map[string]string) (bool, error) {
		return data[runspec.LinkInjectedKey] == runspec.LinkInjected, nil
	})
	if timedOut {
		return &FailureError{Reason: conditions.ReasonNetworkEmulationFailed, Message: fmt.Sprintf(
			"the operator did not mark the emulated link as in place in ConfigMap %s within %s: see the benchmark's "+
				"conditions for what the emulator reported%s", c.name, wait, lastRead(lastErr))}
	}
	return err
}

// AwaitStart marks this pod ready (runspec.ReadyKey) and waits, reading the ConfigMap every
// `every` for at most `wait`, for the moment the operator sets once every pod of the run is ready
// (runspec.StartKey); then it sleeps until that moment, so that every pod's measured load starts
// together. A start already past (a slow read) starts at once.
func (c *ResultConfigMap) AwaitStart(ctx context.Context, wait, every time.Duration) error {
	if err := c.patch(ctx, runspec.ReadyKey(c.index), time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("cannot mark runner pod %d ready in ConfigMap %s: %w", c.index, c.name, err)
	}
	var start time.Time
	timedOut, lastErr, err := c.await(ctx, wait, every, func(data map[string]string) (bool, error) {
		v := data[runspec.StartKey]
		if v == "" {
			return false, nil
		}
		var err error
		if start, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return false, fmt.Errorf("the operator's start %q in ConfigMap %s: %w", v, c.name, err)
		}
		return true, nil
	})
	switch {
	case timedOut:
		return &FailureError{Reason: conditions.ReasonJobFailed, Message: fmt.Sprintf("runner pod %d of %d was ready, but "+
			"the operator did not start the load within %s: not every pod of the run became ready (see the "+
			"benchmark's conditions and the Job's pods)%s", c.index, c.pods, wait, lastRead(lastErr))}
	case err != nil:
		return err
	}
	return sleepUntil(ctx, start)
}

// sleepUntil returns at t, or at once for a t already past, or when ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AwaitWindow writes the stretch this pod's transactions covered (runspec.WindowKey) and waits,
// reading the ConfigMap every `every` for at most `wait`, for every pod of the run to have written
// its own; it returns the stretch they all covered, to which each pod cuts its figures. The pods
// started together and ran the same duration, so the last one writes within moments of the first.
func (c *ResultConfigMap) AwaitWindow(ctx context.Context, covered latency.Span, wait, every time.Duration) (latency.Span, error) {
	from, to := covered.Times()
	if err := c.patch(ctx, runspec.WindowKey(c.index), from.Format(time.RFC3339Nano)+"/"+to.Format(time.RFC3339Nano)); err != nil {
		return latency.Span{}, fmt.Errorf("cannot write runner pod %d's window in ConfigMap %s: %w", c.index, c.name, err)
	}
	var spans []latency.Span
	missing := 0
	timedOut, lastErr, err := c.await(ctx, wait, every, func(data map[string]string) (bool, error) {
		var err error
		if spans, missing, err = podWindows(data, c.pods); err != nil {
			return false, fmt.Errorf("ConfigMap %s: %w", c.name, err)
		}
		return missing < 0, nil
	})
	switch {
	case timedOut:
		return latency.Span{}, &FailureError{Reason: conditions.ReasonJobFailed, Message: fmt.Sprintf(
			"runner pod %d of %d ended its load, but not every pod did within %s (runner pod %d has not written its "+
				"window): see the Job's pods%s", c.index, c.pods, wait, missing, lastRead(lastErr))}
	case err != nil:
		return latency.Span{}, err
	}
	common, ok := latency.Common(spans)
	if !ok {
		return latency.Span{}, &FailureError{Reason: conditions.ReasonJobFailed, Message: fmt.Sprintf(
			"the %d runner pods' loads did not overlap in time (%v): no common window to measure in", c.pods, spans)}
	}
	return common, nil
}

// podWindows reads the pods' windows from the result ConfigMap's data; missing is the first pod
// that has not written its own yet, -1 when all have.
func podWindows(data map[string]string, pods int) (spans []latency.Span, missing int, err error) {
	for i := range pods {
		v, ok := data[runspec.WindowKey(i)]
		if !ok {
			return nil, i, nil
		}
		fromText, toText, _ := strings.Cut(v, "/")
		from, err1 := time.Parse(time.RFC3339Nano, fromText)
		to, err2 := time.Parse(time.RFC3339Nano, toText)
		if err := errors.Join(err1, err2); err != nil {
			return nil, i, fmt.Errorf("runner pod %d's window %q: %w", i, v, err)
		}
		spans = append(spans, latency.SpanOf(from, to))
	}
	return spans, -1, nil
}
