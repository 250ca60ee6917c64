// Command mysqlpool measures TunnelBench's MySQL pooler on this machine against a real MariaDB
// (Debian's, hack/deps.sh): the CPU it spends per transaction of sysbench's oltp_point_select
// (its own process's CPU, read with getrusage: the pool runs in this process and nothing else
// does while sysbench runs), the rate through it against the server's, and what a sequential
// connection costs through each path with the Go MySQL driver (connect, SELECT 1, close): plain,
// TLS, and the pooler with TLS to the server. Paths run interleaved; medians of the rounds.
//
//	go run ./hack/bench/mysqlpool [-rounds 3] [-seconds 5] [-storm 1000]
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tunnelbench/tunnelbench/internal/testing/mysqltest"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/mysqlpool"
)

func main() {
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	seconds := flag.Int("seconds", 5, "seconds of sysbench a round and path")
	storm := flag.Int("storm", 1000, "sequential connections a round and path")
	flag.Parse()
	if err := run(*rounds, *seconds, *storm); err != nil {
		fmt.Fprintln(os.Stderr, "bench mysqlpool:", err)
		os.Exit(1)
	}
}

// bench is the server and the pooler the rounds measure.
type bench struct {
	server     *mysqltest.Server
	poolAddr   string
	seconds    int
	connection int
}

func run(rounds, seconds, storm int) error {
	server, err := mysqltest.Start()
	if err != nil {
		return err
	}
	defer server.Stop()
	pem, err := os.ReadFile(server.CAFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	serverTLS := &tls.Config{RootCAs: roots, ServerName: server.Host, MinVersion: tls.VersionTLS12}
	if err := mysql.RegisterTLSConfig("bench", serverTLS); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, listening, _, err := mysqlpool.Start(ctx, mysqlpool.Config{Server: net.JoinHostPort(server.Host, strconv.Itoa(server.Port)),
		User: server.User, Password: server.Password, PoolSize: 2, ServerTLS: serverTLS}, "127.0.0.1:0")
	if err != nil {
		return err
	}
	b := bench{server: server, poolAddr: listening.String(), seconds: seconds, connection: storm}
	direct := net.JoinHostPort(server.Host, strconv.Itoa(server.Port))
	if out, err := b.sysbench(direct, "oltp_point_select", "prepare"); err != nil {
		return fmt.Errorf("sysbench prepare: %w\n%s", err, out)
	}
	var directTPS, poolTPS, poolCPU, plain, encrypted, pooled []float64
	for r := range rounds {
		tps, _, err := b.load(direct)
		if err != nil {
			return err
		}
		directTPS = append(directTPS, tps)
		tps, cpu, err := b.load(b.poolAddr)
		if err != nil {
			return err
		}
		poolTPS, poolCPU = append(poolTPS, tps), append(poolCPU, cpu)
		for _, p := range []struct {
			out       *[]float64
			addr, tls string
		}{{&plain, direct, ""}, {&encrypted, direct, "bench"}, {&pooled, b.poolAddr, ""}} {
			ms, err := b.storm(p.addr, p.tls)
			if err != nil {
				return err
			}
			*p.out = append(*p.out, ms)
		}
		fmt.Fprintf(os.Stderr, "round %d: direct %.0f tps, pooler %.0f tps at %.1f µs/tx of its CPU; "+
			"a connection: %.3f ms plain, %.3f TLS, %.3f pooled\n",
			r+1, directTPS[r], poolTPS[r], poolCPU[r], plain[r], encrypted[r], pooled[r])
	}
	st := pool.Stats()
	fmt.Printf("MariaDB %s, %d rounds, sysbench oltp_point_select 2 threads %d s, storms of %d (medians)\n\n",
		server.Version, rounds, seconds, storm)
	fmt.Println("| figure | direct | through the pooler (TLS to the server) |\n|---|---|---|")
	fmt.Printf("| tps | %.0f | %.0f |\n", median(directTPS), median(poolTPS))
	fmt.Printf("| the pooler's CPU per transaction | | %.1f µs |\n", median(poolCPU))
	fmt.Printf("| a sequential connection (connect, SELECT 1, close) | %.3f ms plain, %.3f ms TLS | %.3f ms |\n",
		median(plain), median(encrypted), median(pooled))
	fmt.Printf("\nthe pooler opened %d server connections for %d clients\n", st.ServerConnections, st.Clients)
	return nil
}

func (b bench) sysbench(addr string, args ...string) ([]byte, error) {
	host, port, _ := net.SplitHostPort(addr)
	base := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=" + b.server.User,
		"--mysql-password=" + b.server.Password, "--mysql-db=" + b.server.Database, "--tables=1", "--table-size=10000", "--mysql-ssl=off"}
	return exec.Command("sysbench", append(base, args...)...).CombinedOutput()
}

var tpsOf = regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec`)

// load runs sysbench's point selects at addr, and reads this process's CPU over it: the pooler's,
// when addr is the pooler's.
func (b bench) load(addr string) (tps, microsPerTx float64, err error) {
	before := selfCPU()
	out, err := b.sysbench(addr, "--threads=2", "--time="+strconv.Itoa(b.seconds), "--db-ps-mode=disable", "oltp_point_select", "run")
	if err != nil {
		return 0, 0, fmt.Errorf("sysbench: %w\n%s", err, out)
	}
	m := tpsOf.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("no transactions in\n%s", out)
	}
	tx, _ := strconv.ParseFloat(string(m[1]), 64)
	tps, _ = strconv.ParseFloat(string(m[2]), 64)
	return tps, (selfCPU() - before).Seconds() * 1e6 / tx, nil
}

// storm opens b.connection connections one after the other (connect, SELECT 1, close) and
// returns the milliseconds each took.
func (b bench) storm(addr, tlsName string) (float64, error) {
	start := time.Now()
	for range b.connection {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = b.server.User, b.server.Password, "tcp", addr, b.server.Database
		cfg.TLSConfig = tlsName
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return 0, err
		}
		db := sql.OpenDB(c)
		var one int
		err = db.QueryRow("SELECT 1").Scan(&one)
		_ = db.Close()
		if err != nil {
			return 0, err
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000 / float64(b.connection), nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
