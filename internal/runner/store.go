package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
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

// Store keeps the report under runspec.ResultKey, retrying (storeAttempts) a slow API server.
func (c *ResultConfigMap) Store(ctx context.Context, report []byte) error {
	patch, err := json.Marshal(map[string]any{"data": map[string]string{runspec.ResultKey: string(report)}})
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
	if err != nil {
		return fmt.Errorf("cannot store the report in ConfigMap %s: %w", c.name, err)
	}
	return nil
}

// StoreLive keeps the run's live progress under runspec.LiveKey: one attempt, bounded, since the
// next progress report replaces a lost one.
func (c *ResultConfigMap) StoreLive(ctx context.Context, l runspec.Live) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"data": map[string]string{runspec.LiveKey: string(b)}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	_, err = c.configMaps.Patch(ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// AwaitLink waits until the operator marks the emulated link as in place (runspec.AwaitLink),
// reading the ConfigMap every `every` for at most `wait`. A failed read is retried like a missing
// mark: the operator, not the runner, judges the emulator.
func (c *ResultConfigMap) AwaitLink(ctx context.Context, wait, every time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var lastErr error
	for {
		callCtx, callCancel := context.WithTimeout(ctx, storeTimeout)
		cm, err := c.configMaps.Get(callCtx, c.name, metav1.GetOptions{})
		callCancel()
		switch {
		case err == nil && cm.Data[runspec.LinkInjectedKey] == runspec.LinkInjected:
			return nil
		case err != nil:
			lastErr = err
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("the operator did not mark the emulated link as in place in ConfigMap %s within %s: "+
				"see the benchmark's conditions for what the emulator reported", c.name, wait)
			if lastErr != nil {
				msg += fmt.Sprintf(" (last read: %v)", lastErr)
			}
			return &FailureError{Reason: benchv1.ReasonNetworkEmulationFailed, Message: msg}
		case <-time.After(every):
		}
	}
}
