package runner

import (
	"context"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// TestMeasureSetup times connections to a real PostgreSQL, with and without TLS: the handshake is
// a phase of its own only with TLS, the startup (SCRAM and the backend's start) is there in both,
// and the phases add up to the whole.
func TestMeasureSetup(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	tests := []struct {
		sslmode string
		tls     bool
	}{{"disable", false}, {"require", true}}
	for _, tt := range tests {
		t.Run(tt.sslmode, func(t *testing.T) {
			setEnv(t, s.Env(tt.sslmode))
			cfg, err := pgx.ParseConfig("")
			if err != nil {
				t.Fatal(err)
			}
			got, err := measureSetup(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", tt.sslmode, got)
			if got.Probes != setupProbes || got.TCPMs <= 0 || got.StartupMs <= 0 {
				t.Errorf("phases %+v", got)
			}
			// A TLS 1.3 handshake is a round trip and a key exchange: hundreds of microseconds at
			// least; without TLS the phase is the gap between two callbacks.
			if tt.tls && got.TLSMs < 0.1 || !tt.tls && got.TLSMs > 0.05 {
				t.Errorf("TLS phase %.3f ms with TLS %v", got.TLSMs, tt.tls)
			}
			// Medians of phases need not add up to the median of the whole, but come close.
			sum := got.ResolveMs + got.TCPMs + got.TLSMs + got.StartupMs
			if math.Abs(sum-got.TotalMs) > 0.5*got.TotalMs {
				t.Errorf("phases add up to %.3f ms, the whole is %.3f ms", sum, got.TotalMs)
			}
		})
	}
}
