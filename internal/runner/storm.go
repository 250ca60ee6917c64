package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// driverStormName names the storm's client in its command.
const driverStormName = "tunnelbench-runner"

// driverStorm opens size connections one after the other with the run's engine driver, each to
// send probeStatement and close, as pgbench -C -c 1 does: the storm of an engine whose generator
// opens no connection per transaction (sysbench 1.0.20). Its figures are a generator's: the
// connections, their rate from the first dial to the last close, and the mean time to open one
// (the dial, TLS where the path asks for it, the login). A connection that fails ends the storm,
// as it ends pgbench's, with the driver's error.
func driverStorm(ctx context.Context, probe pathProbe, size int32) (*engine.Result, error) {
	res := &engine.Result{Clients: 1, Threads: 1}
	var connectSum float64
	start := time.Now()
	for i := range size {
		dial := time.Now()
		c, err := probe.open(ctx)
		if err != nil {
			return nil, fmt.Errorf("the connection storm: connection %d of %d: %w", i+1, size, err)
		}
		connectSum += millisSince(dial)
		err = c.roundTrip(ctx)
		c.close(ctx)
		if err != nil {
			return nil, fmt.Errorf("the connection storm: %s on connection %d of %d: %w", probeStatement, i+1, size, err)
		}
		res.Transactions++
	}
	elapsed := time.Since(start).Seconds()
	res.TPS = float64(res.Transactions) / elapsed
	res.ConnectionTimeMs = connectSum / float64(res.Transactions)
	res.LatencyAvgMs = elapsed * 1000 / float64(res.Transactions)
	return res, nil
}
