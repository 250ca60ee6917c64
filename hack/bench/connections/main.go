// Command connections measures what a connection costs on this machine through each path
// TunnelBench offers, with the runner's connection storm (pgbench -C -c 1 -t N, select 1): direct,
// TLS, PgBouncer with SCRAM from clients (plain or TLS), PgBouncer with loopback trust (the sidecar
// placement), the vpn transport's WireGuard tunnel (its two user-space ends, in this process) with
// and without TLS inside, and the proxy transport's HAProxy. PgBouncer always reaches the server
// over TLS with the password. Paths are run interleaved, and the median of the rounds is printed
// as a Markdown table.
//
//	go run ./hack/bench/connections [-rounds 3] [-connections 2000]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
)

type path struct {
	name, clientHop, serverHop string
	port                       int
	sslmode                    string
}

func main() {
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	connections := flag.Int("connections", 2000, "connections per storm")
	flag.Parse()
	if err := run(*rounds, int32(*connections)); err != nil {
		fmt.Fprintln(os.Stderr, "bench connections:", err)
		os.Exit(1)
	}
}

func run(rounds int, connections int32) error {
	srv, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	certs, err := pgtest.ReadableDir()
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(certs) }()
	certFile, keyFile, err := pgtest.WritePoolerCertificate(certs, "127.0.0.1")
	if err != nil {
		return err
	}

	paths := []path{
		{name: "direct", clientHop: "SCRAM, plain TCP", serverHop: "–", port: srv.Port, sslmode: "disable"},
		{name: "TLS", clientHop: "SCRAM, TLS", serverHop: "–", port: srv.Port, sslmode: "require"},
	}
	const pooled = "pooled, TLS"
	poolers := []struct {
		path
		auth string
		tls  bool
	}{
		{path{name: "PgBouncer (service)", clientHop: "SCRAM, plain TCP", serverHop: pooled, sslmode: "disable"}, pgbouncer.AuthSCRAM, false},
		{path{name: "PgBouncer + TLS (service)", clientHop: "SCRAM, TLS", serverHop: pooled, sslmode: "require"}, pgbouncer.AuthSCRAM, true},
		{path{name: "PgBouncer (sidecar)", clientHop: "trust, loopback", serverHop: pooled, sslmode: "disable"}, pgbouncer.AuthTrust, false},
	}
	for _, p := range poolers {
		cfg := pgbouncer.Config{ListenAddr: "127.0.0.1", ServerHost: srv.Host, ServerPort: srv.Port, User: srv.User,
			ClientAuth: p.auth, PoolMode: "session", PoolSize: 4, MaxClientConn: 100, ServerTLSMode: "require"}
		if p.tls {
			cfg.ClientTLSCertFile, cfg.ClientTLSKeyFile = certFile, keyFile
		}
		bouncer, err := pgtest.StartPgBouncer(cfg, srv.Password)
		if err != nil {
			return err
		}
		defer bouncer.Stop()
		p.port = bouncer.Port
		paths = append(paths, p.path)
	}
	tunnel, stopTunnel, err := startWireGuard(srv)
	if err != nil {
		return err
	}
	defer stopTunnel()
	proxy, stopProxy, err := startHAProxy(srv)
	if err != nil {
		return err
	}
	defer stopProxy()
	paths = append(paths,
		path{name: "WireGuard (user space)", clientHop: "SCRAM, plain TCP in the tunnel", serverHop: "–", port: tunnel, sslmode: "disable"},
		path{name: "WireGuard + TLS", clientHop: "SCRAM, TLS in the tunnel", serverHop: "–", port: tunnel, sslmode: "require"},
		path{name: "HAProxy (TCP mode)", clientHop: "SCRAM, plain TCP", serverHop: "–", port: proxy, sslmode: "disable"})
	if err := os.MkdirAll(filepath.Dir(runspec.StormScriptPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(runspec.StormScriptPath, []byte(pgbench.StormScript), 0o644); err != nil {
		return err
	}

	rates, connect := map[string][]float64{}, map[string][]float64{}
	for r := 0; r < rounds; r++ {
		for _, p := range paths {
			res, err := storm(srv, p, connections)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			rates[p.name] = append(rates[p.name], res.TPS)
			connect[p.name] = append(connect[p.name], res.ConnectionTimeMs)
		}
	}
	fmt.Printf("connection storm: %d × (connect, select 1, disconnect) from one client, %d interleaved rounds, medians; "+
		"PostgreSQL 15, PgBouncer 1.18, wireguard-go and HAProxy 2.6 on 127.0.0.1\n\n", connections, rounds)
	fmt.Println("| path | client hop | pooler → server | connections/s | vs direct | ms per connection | ms to connect |")
	fmt.Println("|---|---|---|---|---|---|---|")
	base := stats.Median(rates["direct"])
	for _, p := range paths {
		rate := stats.Median(rates[p.name])
		fmt.Printf("| %s | %s | %s | %.0f | %.2f | %.3f | %.3f |\n", p.name, p.clientHop, p.serverHop, rate, rate/base,
			1000/rate, stats.Median(connect[p.name]))
	}
	return nil
}

// storm runs the runner's connection storm with bare pgbench.
func storm(srv *pgtest.Server, p path, n int32) (*engine.Result, error) {
	cmd := exec.Command("pgbench", pgbench.StormArgs(n)...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env(p.sslmode) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PGPORT="+strconv.Itoa(p.port), "PGSSLROOTCERT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	return pgbench.Parse(bytes.NewReader(out))
}
