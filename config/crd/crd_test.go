package crd

import (
	"encoding/json"
	"strings"
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

// sharedBlockSize is the size (compact JSON) from which an object's schema written at two places
// of a CRD counts as written twice.
const sharedBlockSize = 2 << 10

// TestNoSchemaWrittenTwice: a CRD has no $ref, so a Go type used under two fields is expanded at
// each. The results' schema once was (status.results[] and status.sweep.points[].results[], 27 KB
// each); every block of this API's own is written once. Kubernetes' own Affinity, embedded as it is
// for spec.runner.affinity, repeats its terms (podAffinity and podAntiAffinity) and is exempt.
func TestNoSchemaWrittenTwice(t *testing.T) {
	for name, crd := range map[string][]byte{"TunnelBenchmark": TunnelBenchmarks, "ScheduledTunnelBenchmark": ScheduledTunnelBenchmarks} {
		t.Run(name, func(t *testing.T) {
			var doc struct {
				Spec struct {
					Versions []struct {
						Schema struct {
							OpenAPIV3Schema any `json:"openAPIV3Schema"`
						} `json:"schema"`
					} `json:"versions"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(crd, &doc); err != nil || len(doc.Spec.Versions) == 0 {
				t.Fatalf("no schema: %v", err)
			}
			at := map[string][]string{}
			var walk func(node any, path string)
			walk = func(node any, path string) {
				switch n := node.(type) {
				case map[string]any:
					if _, ok := n["properties"]; ok && !strings.Contains(path, ".affinity") {
						if b, err := json.Marshal(n); err == nil && len(b) >= sharedBlockSize {
							at[string(b)] = append(at[string(b)], path)
						}
					}
					for k, v := range n {
						if k == "properties" {
							for field, schema := range v.(map[string]any) {
								walk(schema, path+"."+field)
							}
							continue
						}
						walk(v, path)
					}
				case []any:
					for _, v := range n {
						walk(v, path)
					}
				}
			}
			walk(doc.Spec.Versions[0].Schema.OpenAPIV3Schema, "")
			checked := 0
			for block, paths := range at {
				checked++
				if len(paths) > 1 {
					t.Errorf("a block of %d bytes is written at %v: keep one field of that type", len(block), paths)
				}
			}
			if checked == 0 {
				t.Error("no block checked")
			}
		})
	}
}
