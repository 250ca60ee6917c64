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

// ConfigMapStore stores reports in the ConfigMap name of the pod's namespace, which the operator
// created, empty, before the pod. The runner's ServiceAccount may get and patch that ConfigMap
// and nothing else; its credentials are mounted at runspec.APIAccessPath.
func ConfigMapStore(name string) (func(context.Context, []byte) error, error) {
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
	configMaps := client.ConfigMaps(strings.TrimSpace(string(ns)))
	return func(ctx context.Context, report []byte) error {
		patch, err := json.Marshal(map[string]any{"data": map[string]string{runspec.ResultKey: string(report)}})
		if err != nil {
			return err
		}
		wait := storeBackoff
		for attempt := 1; ; attempt++ {
			callCtx, cancel := context.WithTimeout(ctx, storeTimeout)
			_, err = configMaps.Patch(callCtx, name, types.MergePatchType, patch, metav1.PatchOptions{})
			cancel()
			if err == nil || attempt == storeAttempts || ctx.Err() != nil {
				break
			}
			time.Sleep(wait)
			wait *= 2
		}
		if err != nil {
			return fmt.Errorf("cannot store the report in ConfigMap %s: %w", name, err)
		}
		return nil
	}, nil
}
