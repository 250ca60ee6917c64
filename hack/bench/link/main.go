// Command link measures the userspace link emulator's precision (internal/transport/link) on loopback:
// the RTT it adds (median of round trips of one byte on one connection) for 1 ms–10 s, the spread
// of the round trip with jitter, the bandwidth it lets through (one transfer of about two seconds)
// for 10 Mbit/s–1 Gbit/s and for single small messages on slow lines, and what the proxy costs at
// zero delay (pgbench select-only through the proxy against direct, interleaved rounds, against a
// local PostgreSQL).
//
//	go run ./hack/bench/link [-rounds 5] [-long]
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

	"github.com/tunnelbench/tunnelbench/internal/analysis/stats"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
	"github.com/tunnelbench/tunnelbench/internal/transport/link"
)

// Targets of the precision tables.
const (
	rttTolerance       = 200 * time.Microsecond
	jitterTolerance    = 0.20
	bandwidthTolerance = 0.02
	overheadTarget     = 0.90
)

func main() {
	rounds := flag.Int("rounds", 5, "interleaved pgbench rounds of the zero-delay overhead")
	long := flag.Bool("long", false, "also measure RTTs of 1 s and 10 s (about a minute more)")
	flag.Parse()
	failed := false
	for _, f := range []func() (bool, error){
		func() (bool, error) { return rtt(*long) }, jitter, bandwidth, smallMessages,
		func() (bool, error) { return overhead(*rounds) },
	} {
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

// echoLink is a link to an echo server on loopback, and a connection through it whose first
// round trip (the handshake's) is done.
func echoLink(l link.Link) (net.Conn, func(), error) {
	echo, stopEcho, err := listen(func(c net.Conn) { _, _ = io.Copy(c, c); _ = c.Close() })
	if err != nil {
		return nil, nil, err
	}
	p, err := link.Start("127.0.0.1:0", echo, l)
	if err != nil {
		stopEcho()
		return nil, nil, err
	}
	c, err := net.Dial("tcp", p.Addr())
	if err == nil {
		_, err = roundTrip(c, 1)
	}
	stop := func() { _ = c.Close(); p.Stop(); stopEcho() }
	if err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// roundTrip writes n bytes and reads them back, in milliseconds.
func roundTrip(c net.Conn, n int) (float64, error) {
	begin := time.Now()
	if _, err := c.Write(make([]byte, n)); err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
		return 0, err
	}
	return float64(time.Since(begin)) / float64(time.Millisecond), nil
}

// roundTrips are n round trips of size bytes, sorted, in milliseconds, each gap after the last.
func roundTrips(l link.Link, n, size int, gap time.Duration) ([]float64, error) {
	c, stop, err := echoLink(l)
	if err != nil {
		return nil, err
	}
	defer stop()
	samples := make([]float64, 0, n)
	for range n {
		time.Sleep(gap)
		ms, err := roundTrip(c, size)
		if err != nil {
			return nil, err
		}
		samples = append(samples, ms)
	}
	slices.Sort(samples)
	return samples, nil
}

// baseRTT is the round trip of size bytes through the proxy with nothing to emulate, each after
// an idle gap, in milliseconds: the path's own, which the link adds to. The gap matters: after a
// few milliseconds of idle the machine's own wake-ups (the CPU's sleep states, the scheduler) add
// tens of microseconds to any round trip, emulated or not, so the base is measured with the same
// idle as the figure it is the base of (up to 100 ms, past which it no longer grows).
func baseRTT(size int, gap time.Duration) (float64, error) {
	samples, err := roundTrips(link.Link{}, 20, size, min(gap, 100*time.Millisecond))
	if err != nil {
		return 0, err
	}
	return stats.Median(samples), nil
}

func rtt(long bool) (bool, error) {
	fmt.Println("The error is the measured RTT less the asked one and less the proxy's own round trip with nothing to " +
		"emulate after the same idle (BASE).")
	fmt.Println()
	fmt.Printf("| RTT asked | RTT measured (median) | p90 | base | error | within ±%s |\n|---|---|---|---|---|---|\n",
		rttTolerance)
	asked := []time.Duration{1, 2, 3, 5, 10, 20, 50, 100}
	if long {
		asked = append(asked, 1000, 10_000)
	}
	ok := true
	for _, a := range asked {
		a *= time.Millisecond
		n := 40
		if a >= time.Second {
			n = int(max(3, 10*time.Second/a))
		}
		samples, err := roundTrips(link.Link{RTT: a}, n, 1, 0)
		if err != nil {
			return false, err
		}
		base, err := baseRTT(1, a/2)
		if err != nil {
			return false, err
		}
		median := stats.Median(samples)
		errMs := median - base - float64(a)/float64(time.Millisecond)
		within := math.Abs(errMs) <= float64(rttTolerance)/float64(time.Millisecond)
		ok = ok && within
		fmt.Printf("| %s | %.3f ms (%d) | %.3f ms | %.3f ms | %+.3f ms | %v |\n", a, median, n, samples[len(samples)*9/10], base,
			errMs, within)
	}
	return ok, nil
}

// jitter measures the round trip's standard deviation with jitter: each half varies uniformly by
// ±jitter/2, so the round trip is their sum, of standard deviation jitter/√6.
func jitter() (bool, error) {
	fmt.Printf("| RTT ± jitter asked | round trip's standard deviation (200) | expected jitter/√6 | error | within ±%.0f %% |\n",
		100*jitterTolerance)
	fmt.Println("|---|---|---|---|---|")
	ok := true
	for _, l := range []link.Link{{RTT: 10 * time.Millisecond, Jitter: time.Millisecond},
		{RTT: 20 * time.Millisecond, Jitter: 4 * time.Millisecond}} {
		samples, err := roundTrips(l, 200, 1, 0)
		if err != nil {
			return false, err
		}
		sd := stats.Summarize(samples).StdDev
		want := float64(l.Jitter) / float64(time.Millisecond) / math.Sqrt(6)
		rel := sd/want - 1
		within := math.Abs(rel) <= jitterTolerance
		ok = ok && within
		fmt.Printf("| %s ± %s | %.3f ms | %.3f ms | %+.0f %% | %v |\n", l.RTT, l.Jitter, sd, want, 100*rel, within)
	}
	return ok, nil
}

func bandwidth() (bool, error) {
	fmt.Printf("| bandwidth asked | measured at the far end (2 s transfer) | error | within ±%.0f %% |\n|---|---|---|---|\n",
		100*bandwidthTolerance)
	ok := true
	for _, bits := range []int64{10_000_000, 50_000_000, 100_000_000, 1_000_000_000} {
		measured, err := transfer(bits)
		if err != nil {
			return false, err
		}
		rel := measured/float64(bits) - 1
		within := math.Abs(rel) <= bandwidthTolerance
		ok = ok && within
		fmt.Printf("| %s | %s | %+.1f %% | %v |\n", bitRate(float64(bits)), bitRate(measured), 100*rel, within)
	}
	return ok, nil
}

// arrival is what a sink received: bytes after its first read, between the first and the last.
type arrival struct {
	bytes       int
	first, last time.Time
}

// transfer sends about two seconds' worth through a link of bits and returns the rate the far
// end received it at, from its first read to its last: the line's rate, without the connection's
// opening and closing.
func transfer(bits int64) (float64, error) {
	got := make(chan arrival, 1)
	sink, stop, err := listen(func(c net.Conn) {
		var a arrival
		buf := make([]byte, 256<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if a.first.IsZero() {
					a.first = time.Now()
				} else {
					a.bytes += n
				}
				a.last = time.Now()
			}
			if err != nil {
				break
			}
		}
		_ = c.Close()
		got <- a
	})
	if err != nil {
		return 0, err
	}
	defer stop()
	p, err := link.Start("127.0.0.1:0", sink, link.Link{BitsPerSecond: bits})
	if err != nil {
		return 0, err
	}
	defer p.Stop()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		return 0, err
	}
	size, buf := int(bits/8*2), make([]byte, 64<<10)
	for sent := 0; sent < size; sent += len(buf) {
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
	}
	_ = c.Close()
	a := <-got
	return float64(a.bytes) * 8 / a.last.Sub(a.first).Seconds(), nil
}

// smallMessages sends single messages of one packet, one at a time, through slow lines and back:
// each must pay its serialization time both ways, 2 × size/rate, however idle the line was before
// (a message of several packets overlaps its way back with its way out, as the echo streams).
func smallMessages() (bool, error) {
	fmt.Printf("| line | message (one packet) | round trip (median of 20) | expected 2 × size/rate + base | error | "+
		"within ±%.0f %% |\n", 100*bandwidthTolerance)
	fmt.Println("|---|---|---|---|---|---|")
	ok := true
	for _, m := range []struct {
		bits int64
		size int
	}{{100_000, 100}, {100_000, 1000}, {1_000_000, 100}, {1_000_000, 1000}, {10_000_000, 1448}} {
		oneWay := time.Duration(float64(m.size) * 8 / float64(m.bits) * float64(time.Second))
		base, err := baseRTT(m.size, oneWay)
		if err != nil {
			return false, err
		}
		samples, err := roundTrips(link.Link{BitsPerSecond: m.bits}, 20, m.size, 0)
		if err != nil {
			return false, err
		}
		want := 2*float64(m.size)*8/float64(m.bits)*1000 + base
		median := stats.Median(samples)
		rel := median/want - 1
		within := math.Abs(rel) <= bandwidthTolerance
		ok = ok && within
		fmt.Printf("| %s | %d B | %.2f ms | %.2f ms | %+.1f %% | %v |\n", bitRate(float64(m.bits)), m.size, median, want,
			100*rel, within)
	}
	return ok, nil
}

func bitRate(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.3f Gbit/s", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f Mbit/s", b/1e6)
	}
	return fmt.Sprintf("%.0f Kbit/s", b/1e3)
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
