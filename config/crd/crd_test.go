package crd

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

// compactJSONBudget is what each CRD may take as compact JSON. Client-side `kubectl apply` keeps
// the whole object in an annotation, and an object's annotations may hold 256 KiB together; the
// budget leaves a fifth of that for growth made visible here, not at a user's `kubectl apply`.
// (The documented kustomize install applies --server-side, which stores no such annotation, and
// the Helm chart creates the CRDs without it; the budget is for everyone else.)
const compactJSONBudget = 200 << 10

// TestCRDsFitTheirBudget: each CRD's compact JSON stays under compactJSONBudget. When it fails, a
// schema grew by a block written twice (a Go type reused under two fields is expanded at each) or by
// long descriptions: share or shorten before raising the budget.
func TestCRDsFitTheirBudget(t *testing.T) {
	for name, crd := range map[string][]byte{"TunnelBenchmark": TunnelBenchmarks, "ScheduledTunnelBenchmark": ScheduledTunnelBenchmarks} {
		t.Run(name, func(t *testing.T) {
			compact, err := yaml.YAMLToJSON(crd)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(compact) {
				t.Fatal("not JSON")
			}
			t.Logf("%s: %d bytes of compact JSON, %.0f %% of the budget (%d)", name, len(compact),
				100*float64(len(compact))/compactJSONBudget, compactJSONBudget)
			if len(compact) > compactJSONBudget {
				t.Errorf("%s's CRD is %d bytes of compact JSON, over its budget of %d", name, len(compact), compactJSONBudget)
			}
		})
	}
}
