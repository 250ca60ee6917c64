package runner

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// setupProbes is how many connections the setup's phases are the medians of.
const setupProbes = 5

// setupTimes are the moments of one connection's setup, as pgx goes through it: the name
// resolved and the dial begun, the TCP connection made (to the path's first hop: the server, a
// tunnel's or a pooler's loopback end), the TLS handshake done (after PostgreSQL's SSLRequest),
// and the startup done (authentication, the backend's start; through a pooler, its login).
type setupTimes struct {
	start, dialed, connected, secured, ready time.Time
}

// timedConnect opens and closes one connection, timing its phases; a retry (sslmode=prefer's
// plain fallback, another host) times its own attempt only.
func timedConnect(ctx context.Context, cfg *pgx.ConnConfig) (setupTimes, error) {
	c := cfg.Copy()
	var t setupTimes
	dial := c.DialFunc
	c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		t.dialed = time.Now()
		conn, err := dial(ctx, network, addr)
		t.connected, t.secured = time.Now(), time.Now()
		return conn, err
	}
	after := c.AfterNetConnect
	c.AfterNetConnect = func(ctx context.Context, pc *pgconn.Config, conn net.Conn) (net.Conn, error) {
		// pgx hands over a TLS connection before its handshake, which the startup message would
		// trigger: done here, it is timed apart.
		if tc, ok := conn.(*tls.Conn); ok {
			if err := tc.HandshakeContext(ctx); err != nil {
				return nil, err
			}
		}
		t.secured = time.Now()
		if after != nil {
			return after(ctx, pc, conn)
		}
		return conn, nil
	}
	t.start = time.Now()
	conn, err := connect(ctx, c)
	t.ready = time.Now()
	if err != nil {
		return t, err
	}
	_ = conn.Close(ctx)
	return t, nil
}

// measureSetup times setupProbes connections through the path and reports the median of each
// phase. Probed after the measured window, the path as the load left it: a pooler's server
// connections open, so its part is its own login.
func measureSetup(ctx context.Context, cfg *pgx.ConnConfig) (*report.Setup, error) {
	if cfg == nil {
		// Another engine's session: the probe speaks PostgreSQL.
		return nil, nil
	}
	var resolve, tcp, handshake, startup, total []float64
	for range setupProbes {
		t, err := timedConnect(ctx, cfg)
		if err != nil {
			return nil, err
		}
		resolve = append(resolve, millis(t.dialed.Sub(t.start)))
		tcp = append(tcp, millis(t.connected.Sub(t.dialed)))
		handshake = append(handshake, millis(t.secured.Sub(t.connected)))
		startup = append(startup, millis(t.ready.Sub(t.secured)))
		total = append(total, millis(t.ready.Sub(t.start)))
	}
	return &report.Setup{Probes: setupProbes, ResolveMs: stats.Median(resolve), TCPMs: stats.Median(tcp),
		TLSMs: stats.Median(handshake), StartupMs: stats.Median(startup), TotalMs: stats.Median(total)}, nil
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
