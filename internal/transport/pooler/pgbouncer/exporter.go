package pgbouncer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/evidence"
)

// CNPGExporterPort is where CloudNativePG's Pooler pods serve their PgBouncer metrics.
const CNPGExporterPort = 9127

// Metric names of CloudNativePG's PgBouncer exporter (pkg/management/pgbouncer/metricsserver).
const (
	exporterTransactions = "cnpg_pgbouncer_stats_total_xact_count"
	exporterServerPrefix = "cnpg_pgbouncer_pools_sv_"
)

// serverStates are the SHOW POOLS columns whose sum is the pool's server connections.
var serverStates = map[string]bool{"active": true, "idle": true, "used": true, "tested": true, "login": true}

// ObserveExporter takes a snapshot from the exporters of every pod behind host (a headless
// Service's name, or an address), summing their counters: a CloudNativePG Pooler's admin console
// is not open to the application's user, its exporter is. The exporter reads SHOW STATS and
// SHOW POOLS when scraped, so the figures are as live as the admin console's.
func ObserveExporter(ctx context.Context, host string, port int) (*evidence.Snapshot, error) {
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the pooler's exporters %s: %w", host, err)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	snap := &evidence.Snapshot{}
	for _, addr := range addrs {
		url := "http://" + net.JoinHostPort(addr, strconv.Itoa(port)) + "/metrics"
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("cannot scrape the pooler's exporter %s: %w", url, err)
		}
		err = addExposition(snap, resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("the pooler's exporter %s: %w", url, err)
		}
	}
	return snap, nil
}

// addExposition adds the counters of one Prometheus text exposition to the snapshot.
func addExposition(snap *evidence.Snapshot, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := sample(line)
		if !ok {
			continue
		}
		switch {
		case name == exporterTransactions:
			snap.Transactions += int64(value)
		case strings.HasPrefix(name, exporterServerPrefix) && serverStates[strings.TrimPrefix(name, exporterServerPrefix)]:
			snap.ServerConnections += int(value)
		}
	}
	return sc.Err()
}

// sample splits `name{labels} value [timestamp]`.
func sample(line string) (string, float64, bool) {
	name, rest := line, ""
	if i := strings.IndexAny(line, "{ "); i >= 0 {
		name = line[:i]
		rest = line[i:]
	}
	if strings.HasPrefix(rest, "{") {
		end := strings.LastIndex(rest, "}")
		if end < 0 {
			return "", 0, false
		}
		rest = rest[end+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	return name, v, err == nil
}
