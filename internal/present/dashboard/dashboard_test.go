package dashboard

import (
	"bytes"
	"encoding/json"
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

// TestHistoryPanels: the store's panels read it through the history variable's PostgreSQL data
// source, with their SQL as SQLPanels gives it (the e2e runs that SQL on the real store).
func TestHistoryPanels(t *testing.T) {
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, p := range SQLPanels() {
		quoted, _ := json.Marshal(p.SQL)
		if !strings.Contains(page, string(quoted)) || !strings.Contains(page, p.Title) {
			t.Errorf("panel %q or its SQL is not in the dashboard", p.Title)
		}
	}
	if !strings.Contains(page, `"uid": "${history}"`) || !strings.Contains(page, `"type": "grafana-postgresql-datasource"`) {
		t.Error("the store's panels do not use the history data source variable")
	}
}
