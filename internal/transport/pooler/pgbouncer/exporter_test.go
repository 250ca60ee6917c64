package pgbouncer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/evidence"
)

// exposition is what CloudNativePG's exporter serves (names from its metricsserver package).
const exposition = `# HELP cnpg_pgbouncer_stats_total_xact_count Total number of SQL transactions pooled by pgbouncer.
# TYPE cnpg_pgbouncer_stats_total_xact_count gauge
cnpg_pgbouncer_stats_total_xact_count{database="app"} 1500
cnpg_pgbouncer_stats_total_xact_count{database="pgbouncer"} 7
cnpg_pgbouncer_stats_total_query_count{database="app"} 1510
# TYPE cnpg_pgbouncer_pools_sv_active gauge
cnpg_pgbouncer_pools_sv_active{database="app",user="app"} 2
cnpg_pgbouncer_pools_sv_idle{database="app",user="app"} 3
cnpg_pgbouncer_pools_sv_wait_cancels{database="app",user="app"} 9
cnpg_pgbouncer_pools_cl_active{database="app",user="app"} 4
cnpg_pgbouncer_last_collection_error 0
`

func TestObserveExporter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = fmt.Fprint(w, exposition)
	}))
	defer srv.Close()
	host, portText, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portText)
	snap, err := ObserveExporter(context.Background(), host, port)
	if err != nil {
		t.Fatal(err)
	}
	// Every database counts (the admin console's own too, as with SHOW STATS); cancel and client
	// gauges are not server connections.
	if snap.Transactions != 1507 || snap.ServerConnections != 5 {
		t.Errorf("snapshot %+v", snap)
	}
	if _, err := ObserveExporter(context.Background(), "127.0.0.1", 1); err == nil {
		t.Error("an unreachable exporter must be an error")
	}
}

// FuzzExposition: whatever a pooler's exporter answers, the counters are read or skipped line by
// line, never a panic, and a line of another series never counts.
func FuzzExposition(f *testing.F) {
	f.Add("# HELP pgbouncer_stats_queries_pooled_total x\npgbouncer_stats_queries_pooled_total{database=\"app\"} 42\n")
	f.Add("pgbouncer_pools_server_active_connections{database=\"app\",user=\"app\"} 3 1700000000000\n")
	f.Add("pgbouncer_pools_server_idle_connections{a=\"}\"} NaN\nother_metric 5\n")
	f.Fuzz(func(t *testing.T, text string) {
		snap := &evidence.Snapshot{}
		_ = addExposition(snap, strings.NewReader(text))
		if !strings.Contains(text, exporterTransactions) && snap.Transactions != 0 {
			t.Fatalf("%d transactions from a text without %s", snap.Transactions, exporterTransactions)
		}
		if !strings.Contains(text, exporterServerPrefix) && snap.ServerConnections != 0 {
			t.Fatalf("%d server connections from a text without %s", snap.ServerConnections, exporterServerPrefix)
		}
	})
}
