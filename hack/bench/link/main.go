// Command link measures the userspace link emulator's precision (internal/link) on loopback:
// the RTT it adds (median of round trips of one byte on one connection) for 5–100 ms, the
// bandwidth it lets through (one transfer of about two seconds) for 10 Mbit/s–1 Gbit/s, and what
// the proxy costs at zero delay (pgbench select-only through the proxy against direct, interleaved
// rounds, against a local PostgreSQL).
//
//	go run ./hack/bench/link [-rounds 5]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/link"
	"github.com/tunnelbench/tunnelbench/internal/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/stats"
)

// Targets of the precision table.
const (
	rttTolerance       = time.Millisecond
	bandwidthTolerance = 0.10
	overheadTarget     = 0.95
)

func main() {
	rounds := flag.Int("rounds", 5, "interleaved pgbench rounds of the zero-delay overhead")
	flag.Parse()
	failed := false
	for _, f := range []func() (bool, error){rtt, bandwidth, func() (bool, error) { return overhead(*rounds) }} {
		ok, err := f()
		if err != nil {
			fmt.Fprintln(os.Stderr, "link:", err)
			os.Exit(1)
		}
		failed = failed || !ok
		fmt.Println()
	}
	if failed {
		fmt.Println("some figures miss their target")
	}
}

func listen(serve func(net.Conn)) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return l.Addr().String(), func() { _ = l.Close() }, nil
}

func rtt() (bool, error) {
	echo, stop, err := listen(func(c net.Conn) { _, _ = io.Copy(c, c); _ = c.Close() })
	if err != nil {
		return false, err
	}
	defer stop()
	fmt.Println("| RTT asked | RTT measured (median of 40) | p90 | error | within ±1 ms |")
	fmt.Println("|---|---|---|---|---|")
	ok := true
	for _, asked := range []time.Duration{5, 10, 20, 50, 100} {
		asked *= time.Millisecond
		p, err := link.Start("127.0.0.1:0", echo, link.Link{RTT: asked})
		if err != nil {
			return false, err
		}
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			return false, err
		}
		var samples []float64
		for i := range 41 {
			begin := time.Now()
			if _, err := c.Write([]byte{1}); err != nil {
				return false, err
			}
			if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
				return false, err
			}
			if i > 0 { // the first carries the handshake's RTT too
				samples = append(samples, float64(time.Since(begin))/float64(time.Millisecond))
			}
		}
		_ = c.Close()
		p.Stop()
		slices.Sort(samples)
		median := stats.Median(samples)
		errMs := median - float64(asked)/float64(time.Millisecond)
		within := math.Abs(errMs) <= float64(rttTolerance)/float64(time.Millisecond)
		ok = ok && within
		fmt.Printf("| %s | %.3f ms | %.3f ms | %+.3f ms | %v |\n", asked, median, samples[len(samples)*9/10], errMs, within)
	}
	return ok, nil
}

func bandwidth() (bool, error) {
	sink, stop, err := listen(func(c net.Conn) { _, _ = io.Copy(io.Discard, c); _ = c.Close() })
	if err != nil {
		return false, err
	}
	defer stop()
	fmt.Println("| bandwidth asked | measured | error | within ±10 % |")
	fmt.Println("|---|---|---|---|")
	ok := true
	for _, bits := range []int64{10_000_000, 50_000_000, 100_000_000, 1_000_000_000} {
		p, err := link.Start("127.0.0.1:0", sink, link.Link{BitsPerSecond: bits})
		if err != nil {
			return false, err
		}
		size := int(bits / 8 * 2) // about two seconds
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			return false, err
		}
		begin := time.Now()
		buf := make([]byte, 64<<10)
		for sent := 0; sent < size; sent += len(buf) {
			if _, err := c.Write(buf); err != nil {
				return false, err
			}
		}
		_ = c.(*net.TCPConn).CloseWrite()
		_, _ = io.Copy(io.Discard, c)
		elapsed := time.Since(begin)
		_ = c.Close()
		p.Stop()
		measured := float64(size) * 8 / elapsed.Seconds()
		rel := measured/float64(bits) - 1
		within := math.Abs(rel) <= bandwidthTolerance
		ok = ok && within
		fmt.Printf("| %s | %s | %+.1f %% | %v |\n", bitRate(float64(bits)), bitRate(measured), 100*rel, within)
	}
	return ok, nil
}

func bitRate(b float64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.3f Gbit/s", b/1e9)
	}
	return fmt.Sprintf("%.1f Mbit/s", b/1e6)
}

func overhead(rounds int) (bool, error) {
	srv, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		return false, err
	}
	defer srv.Stop()
	env := os.Environ()
	for k, v := range srv.Env("disable") {
		env = append(env, k+"="+v)
	}
	if out, err := command(env, "pgbench", "-i", "-s", "10", "-q").CombinedOutput(); err != nil {
		return false, fmt.Errorf("pgbench -i: %w: %s", err, out)
	}
	p, err := link.Start("127.0.0.1:0", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)), link.Link{})
	if err != nil {
		return false, err
	}
	defer p.Stop()
	upstream := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	// The floor: a proxy that only copies (io.Copy, which splices on Linux), the least any
	// userspace hop can cost, so that the emulator's own pipeline is told apart from the hop.
	floorAddr, stopFloor, err := listen(func(c net.Conn) { copyProxy(c, upstream) })
	if err != nil {
		return false, err
	}
	defer stopFloor()
	ports := map[string]string{}
	for via, addr := range map[string]string{"proxy": p.Addr(), "copy": floorAddr} {
		_, ports[via], _ = net.SplitHostPort(addr)
	}
	args := []string{"-n", "-b", "select-only", "-M", "prepared", "-c", "4", "-j", "2", "-T", "5"}
	fmt.Printf("pgbench %s, %d interleaved rounds, PostgreSQL on 127.0.0.1, the proxy with no delay and no limit\n\n",
		strings.Join(args, " "), rounds)
	vias := []string{"direct", "proxy", "copy"}
	tps := map[string][]float64{}
	for range rounds {
		for _, via := range vias {
			runEnv := env
			if port, ok := ports[via]; ok {
				runEnv = append(append([]string(nil), env...), "PGPORT="+port)
			}
			out, err := command(runEnv, "pgbench", args...).CombinedOutput()
			if err != nil {
				return false, fmt.Errorf("%s: %w: %s", via, err, out)
			}
			res, err := pgbench.Parse(strings.NewReader(string(out)))
			if err != nil {
				return false, err
			}
			tps[via] = append(tps[via], res.TPS)
		}
	}
	direct := stats.Median(tps["direct"])
	ratio := stats.Median(tps["proxy"]) / direct
	ok := ratio >= overheadTarget
	fmt.Printf("median tps: direct %.0f, through the proxy %.0f, through a copy-only proxy %.0f\n",
		direct, stats.Median(tps["proxy"]), stats.Median(tps["copy"]))
	fmt.Printf("proxy/direct = %.3f (target ≥ %.2f: %v); copy-only/direct = %.3f (the floor of any userspace hop)\n",
		ratio, overheadTarget, ok, stats.Median(tps["copy"])/direct)
	for _, via := range vias {
		fmt.Printf("%-7s rounds %v\n", via, rounded(tps[via]))
	}
	return ok, nil
}

// copyProxy forwards c to upstream with nothing in between.
func copyProxy(c net.Conn, upstream string) {
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		_ = c.Close()
		return
	}
	go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
	_, _ = io.Copy(c, u)
	_ = c.Close()
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(math.Round(x))
	}
	return out
}

func command(env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return cmd
}
