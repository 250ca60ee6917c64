package mysqlpool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/evidence"
)

// Name is how results name this pooler.
const Name = "TunnelBench mysqlpool"

// Observe reads the counters a pooler serves on addr (its --stats, on the runner pod's loopback)
// as the evidence every pooler gives.
func Observe(ctx context.Context, addr string) (*evidence.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot read the MySQL pooler's counters: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var st Stats
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the MySQL pooler's counters: %s", resp.Status)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<16)).Decode(&st); err != nil {
		return nil, fmt.Errorf("the MySQL pooler's counters: %w", err)
	}
	snap := &evidence.Snapshot{Transactions: st.Lends, WaitMicros: int64(st.WaitSeconds * 1e6), WaitCounted: true,
		ServerConnections: int(st.ServerConnections), Version: Name}
	if st.ServerTLS != "none" {
		snap.ServerTLS = st.ServerTLS
	}
	return snap, nil
}
