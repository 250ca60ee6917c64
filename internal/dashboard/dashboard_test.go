package dashboard

import (
	"bytes"
	"strings"
	"testing"
)

// TestDashboard: the SDK builds it without an error, every per-transport query is filtered by the
// dashboard's variables, and the JSON is the same every time (the chart's file is compared with it).
func TestDashboard(t *testing.T) {
	a, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := JSON()
	if !bytes.Equal(a, b) {
		t.Error("the dashboard's JSON differs between two builds")
	}
	for _, p := range Panels() {
		if len(p.Queries) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Queries {
			if strings.Contains(q, "tunnelbench_transport_") && !strings.Contains(q, Selector) {
				t.Errorf("panel %q ignores the variables: %s", p.Title, q)
			}
		}
	}
}
