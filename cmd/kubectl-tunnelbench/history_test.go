package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
	"github.com/tunnelbench/tunnelbench/internal/history"
	"github.com/tunnelbench/tunnelbench/internal/present/trend"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// TestHistoryCommand: a schedule's four benchmarks, the last with ssh found regressed, printed
// from the kept benchmarks and from a real PostgreSQL store, in every format.
func TestHistoryCommand(t *testing.T) {
	pgtest.SkipIfShort(t)
	c, plugin := pluginEnv(t)
	ctx := context.Background()
	stb := &benchv1.ScheduledTunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "db-team", Name: "nightly"},
		Spec: benchv1.ScheduledTunnelBenchmarkSpec{Schedule: "@daily", BenchmarkTemplate: benchv1.TunnelBenchmarkTemplate{
			Spec: benchsim.Completed("t", []float64{1}).Spec}}}
	if err := c.Create(ctx, stb); err != nil {
		t.Fatal(err)
	}
	hash := stb.TemplateHash()
	var records []history.Record
	for i, ssh := range []float64{500, 505, 495, 250} {
		tb := benchsim.Completed(fmt.Sprintf("nightly-%d", i), []float64{1000, 1010, 990}, []float64{800, 795, 805},
			[]float64{ssh, ssh + 5, ssh - 5})
		tb.Namespace, tb.Labels = "db-team", map[string]string{benchv1.LabelSchedule: "nightly", benchv1.LabelTemplateHash: hash}
		tb.Spec = stb.Spec.BenchmarkTemplate.Spec
		tb.Status.CompletionTime = &metav1.Time{Time: time.Date(2026, 11, 27, i, 0, 0, 0, time.UTC)}
		if i == 3 {
			tb.Status.Regression = []benchv1.TransportJudgement{{Transport: "ssh", Figure: "ratio", Regressed: true}}
		}
		store(t, c, tb)
		stored := &benchv1.TunnelBenchmark{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(tb), stored); err != nil {
			t.Fatal(err)
		}
		records = append(records, history.RecordOf(stored, "nightly", hash))
	}

	out, err := plugin("history", "nightly")
	if err != nil || !strings.Contains(out, "4 benchmarks (from the kept benchmarks)") || strings.Count(out, "nightly-") != 4 ||
		!strings.Contains(out, "0.25 !") || strings.Count(out, "!") != 2 {
		t.Errorf("history: %v\n%s", err, out)
	}
	out, err = plugin("history", "nightly", "-o", "csv")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 1+4*5 {
		t.Errorf("csv: %v, %d lines\n%s", err, len(lines), out)
	}
	out, err = plugin("history", "nightly", "-o", "json")
	var h trend.History
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || len(h.Points) != 20 || len(h.Benchmarks()) != 4 {
		t.Errorf("json: %v\n%s", err, out)
	}
	page := filepath.Join(t.TempDir(), "nightly.html")
	if out, err := plugin("history", "nightly", "-o", "html", "--file", page); err != nil || !strings.Contains(out, page) {
		t.Fatalf("html: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(page); strings.Count(string(b), "<svg") != 5 || strings.Count(string(b), ">change<") != 1 {
		t.Errorf("the page has %d charts and %d change points, want 5 and 1", strings.Count(string(b), "<svg"),
			strings.Count(string(b), ">change<"))
	}

	pg, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	st, err := history.Open(pg.ConnString("require"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, r := range records {
		if _, err := st.Write(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.MarkRegressed(ctx, records[3].UID, "ssh", regress.FigureRatio); err != nil {
		t.Fatal(err)
	}
	// The kept benchmarks gone, the store still has them.
	if err := c.DeleteAllOf(ctx, &benchv1.TunnelBenchmark{}, client.InNamespace("db-team")); err != nil {
		t.Fatal(err)
	}
	uriFile := func(uri string) string {
		f := filepath.Join(t.TempDir(), "uri")
		if err := os.WriteFile(f, []byte(uri+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	out, err = plugin("history", "nightly", "--store", uriFile(pg.ConnString("require")))
	if err != nil || !strings.Contains(out, "4 benchmarks (from the store)") || !strings.Contains(out, "0.25 !") {
		t.Errorf("history from the store: %v\n%s", err, out)
	}
	t.Setenv(storeEnv, pg.ConnString("require"))
	if out, err = plugin("history", "nightly"); err != nil || !strings.Contains(out, "from the store") {
		t.Errorf("history from the store named by $%s: %v\n%s", storeEnv, err, out)
	}
	t.Setenv(storeEnv, "")
	if _, err := plugin("history", "nightly", "--store", uriFile("postgres://u:s3cret@127.0.0.1:1/x?connect_timeout=2")); err == nil ||
		strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unreachable store: %v", err)
	}
	// A URI on the command line would leave its password in ps and the shell's history.
	if _, err := plugin("history", "nightly", "--store", "postgres://u:s3cret@127.0.0.1:1/x"); err == nil ||
		strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "a file holding the store's URI") {
		t.Errorf("a URI given to --store: %v", err)
	}
}
