package runspec

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func parse(args []string) (Run, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Run{}, err
	}
	return f.Run()
}

func load() Load {
	return Load{Builtin: "select-only", Protocol: "prepared", Clients: 4, Threads: 2, Duration: 10 * time.Second,
		ProgressInterval: 5 * time.Second, StallTimeout: 30 * time.Second}
}

// TestArgsRoundTrip: what the operator renders is what the runner reads, field for field, for each
// shape of run the operator builds.
func TestArgsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		run  Run
	}{
		{"init", Run{Init: true, Scale: 10, WaitTimeout: time.Minute, Tunnels: 1}},
		{"plain load", Run{WaitTimeout: 2 * time.Minute, Load: load(), Tunnels: 1}},
		{"script", Run{Load: Load{Script: true, Protocol: "extended", Clients: 8, Threads: 2, Duration: 90 * time.Second,
			ProgressInterval: 1500 * time.Millisecond}, Tunnels: 1}},
		{"reconnect", Run{Load: func() Load { l := load(); l.Reconnect = true; return l }(), Tunnels: 1}},
		{"transactions instead of a duration", Run{Load: Load{Builtin: "tpcb-like", Protocol: "simple", Clients: 1, Threads: 1,
			Transactions: 500, ProgressInterval: time.Second}, Tunnels: 1}},
		{"ssh with 4 tunnels", Run{WaitTimeout: time.Minute, Load: load(), Tunnels: 4, TunnelPort: TunnelBasePort,
			SSHLogDir: SSHLogDir}},
		{"sidecars' CPU", Run{Load: load(), Tunnels: 2, TunnelPort: TunnelBasePort,
			CPUParts: []CPUPart{{"gateway", "b-ssh-gateway-0a1b2c.db.svc", PeerCPUPort, ""}, {"link", "", CPUStatsBasePort, ""},
				{"tunnel-0", "", CPUStatsBasePort + 1, ""}, {"tunnel-1", "", CPUStatsBasePort + 2, ""},
				{"server", "10.244.0.17", NodeReaderPort, "0f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"}}}},
		{"opaque pooler with metrics", Run{Load: load(), Tunnels: 1, Pooler: PoolerOpaque,
			PoolerMetrics: "pool-metrics.db.svc:9127"}},
		{"pgbouncer and a storm", Run{Load: load(), Storm: 150, Tunnels: 1, Pooler: PoolerPgBouncer}},
		{"the MySQL pooler and a storm", Run{Engine: EngineMySQL, Load: Load{Builtin: "oltp_point_select", Clients: 2,
			Duration: 10 * time.Second}, Storm: 150, Tunnels: 1, Pooler: PoolerMySQL, PoolerMetrics: "127.0.0.1:9128"}},
		{"largest storm", Run{Load: load(), Storm: MaxStorm, Tunnels: 1}},
		{"warm-up", Run{Load: load(), Warmup: 5 * time.Second, Tunnels: 1}},
		{"the path's earlier rate", Run{Load: load(), ExpectedTPS: 351, Tunnels: 1}},
		{"open loop", Run{Load: func() Load {
			l := load()
			l.Rate, l.LatencyLimit = 250.5, 2500*time.Microsecond
			return l
		}(), Tunnels: 1}},
		{"result ConfigMap", Run{Load: load(), Tunnels: 1, ResultConfigMap: "bench-direct-r2-abc123"}},
		{"a copy load", Run{Tunnels: 1, Copy: Copy{Bytes: 64 << 20, Data: CopyRandom}}},
		{"creating a copy data set", Run{Init: true, Tunnels: 1, Copy: Copy{Bytes: 1 << 20, Data: CopyText}}},
		{"a MySQL load at a scale", Run{Engine: EngineMySQL, Scale: 3, Load: Load{Builtin: "oltp_read_write", Clients: 4,
			Duration: time.Minute, ProgressInterval: time.Second, Rate: 200}, Tunnels: 2, TunnelPort: TunnelBasePort}},
		{"a MySQL data set", Run{Engine: EngineMySQL, Init: true, Scale: 2, Tunnels: 1}},
		{"a MySQL load across an emulated link, then a storm", Run{Engine: EngineMySQL, Scale: 1, Load: Load{Builtin: "oltp_point_select",
			Clients: 2, Duration: time.Minute}, Tunnels: 1, Link: Link{RTT: 10 * time.Millisecond, BitsPerSecond: 50_000_000},
			Storm: 600}},
		{"an emulated link", Run{Load: load(), Tunnels: 1, Link: Link{RTT: 10 * time.Millisecond, Jitter: time.Millisecond,
			BitsPerSecond: 50_000_000}}},
		{"a link set up from outside", Run{Load: load(), Tunnels: 1, ResultConfigMap: "bench-wan-r1-abc123",
			Link: Link{BitsPerSecond: 50_000_000}, AwaitLink: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run.Validate(); err != nil {
				t.Fatalf("the test's run is invalid: %v", err)
			}
			got, err := parse(tt.run.Args())
			if err != nil {
				t.Fatalf("parsing %q: %v", tt.run.Args(), err)
			}
			if !reflect.DeepEqual(got, tt.run) {
				t.Errorf("round trip of %q:\n got %+v\nwant %+v", tt.run.Args(), got, tt.run)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	r := Run{WaitTimeout: time.Minute, Load: load(), Tunnels: 3, TunnelPort: TunnelBasePort, SSHLogDir: SSHLogDir}
	want := "--wait-timeout=1m0s --builtin=select-only --protocol=prepared --clients=4 --threads=2 --duration=10s " +
		"--progress-interval=5s --stall-timeout=30s --tunnels=3 --tunnel-port=15432 --ssh-log-dir=/run/tunnelbench/ssh"
	if got := strings.Join(r.Args(), " "); got != want {
		t.Errorf("Args = %q\n want %q", got, want)
	}
	initRun := Run{Init: true, Scale: 10, Tunnels: 1}
	if got := strings.Join(initRun.Args(), " "); got != "--init --scale=10 --tunnels=1" {
		t.Errorf("init Args = %q", got)
	}
}

func TestFlagsRejectBadRuns(t *testing.T) {
	valid := []string{"--builtin=select-only", "--duration=10s", "--tunnels=1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown pooler", []string{"--pooler=pgpool"}, "--pooler must be"},
		{"duration and transactions", []string{"--transactions=10"}, "mutually exclusive"},
		{"storm below range", []string{"--storm=-1"}, "--storm -1 is out of range"},
		{"storm above range", []string{"--storm=100001"}, "out of range 0..100000"},
		{"storm beyond int32", []string{"--storm=4294967297"}, "out of range"},
		{"no tunnel", []string{"--tunnels=0"}, "--tunnels must be at least 1"},
		{"tunnels without a port", []string{"--tunnels=2"}, "needs --tunnel-port"},
		{"metrics of a readable pooler", []string{"--pooler=pgbouncer", "--pooler-metrics=m:9127"}, "--pooler-metrics applies only"},
		{"unknown protocol", []string{"--protocol=binary"}, "--protocol must be"},
		{"builtin and script", []string{"--script"}, "mutually exclusive"},
		{"negative clients", []string{"--clients=-1"}, "must not be negative"},
		{"pgbench argv", []string{"--", "-c", "4"}, "unexpected arguments"},
		{"storm with init", []string{"--init", "--storm=5"}, "--storm does not apply"},
		{"scale without init", []string{"--scale=3"}, "--scale applies only to --init"},
		{"not a duration", []string{"--duration=10"}, "invalid value"},
		{"negative warm-up", []string{"--warmup=-1s"}, "--warmup must not be negative"},
		{"warm-up with init", []string{"--init", "--warmup=5s"}, "--warmup does not apply"},
		{"jitter above the RTT", []string{"--link-rtt=5ms", "--link-jitter=10ms"}, "--link-jitter must not exceed --link-rtt"},
		{"negative bandwidth", []string{"--link-bandwidth=-1"}, "must not be negative"},
		{"copy and pgbench", []string{"--copy-bytes=1048576", "--copy-data=text"}, "the load flags do not apply"},
		{"copy of nothing", []string{"--init", "--copy-bytes=10", "--copy-data=text"}, "--copy-bytes must be at least 1024"},
		{"copy of what", []string{"--init", "--copy-bytes=1048576", "--copy-data=zeros"}, "--copy-data must be text or random"},
		{"link with init", []string{"--init", "--link-rtt=5ms"}, "do not apply to --init"},
		{"awaiting no link", []string{"--await-link", "--result-configmap=r"}, "--await-link needs an emulated link"},
		{"a pod on loopback", []string{"--cpu-parts=server=14700/0f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"}, "is not a pod UID on a node reader"},
		{"a path for a pod", []string{"--cpu-parts=server=10.0.0.1:14700/../etc"}, "is not a pod UID"},
		{"a part twice", []string{"--cpu-parts=link=14500,link=14501"}, "not a unique container name"},
		{"awaiting with nowhere to look", []string{"--await-link", "--link-rtt=5ms"}, "--await-link needs an emulated link"},
		{"an unknown engine", []string{"--engine=oracle"}, "--engine must be postgresql or mysql"},
		{"pgbench's builtin on MySQL", []string{"--engine=mysql"}, `cannot run --builtin="select-only"`},
		{"a Lua file for a builtin", []string{"--engine=mysql", "--builtin=/tmp/x.lua"}, "sysbench's built-in tests are"},
		{"MySQL's extended protocol", []string{"--engine=mysql", "--builtin=oltp_read_only", "--protocol=extended"}, "--protocol=extended"},
		{"reconnect on MySQL", []string{"--engine=mysql", "--builtin=oltp_read_only", "--reconnect"}, "cannot reconnect"},
		{"a latency limit on MySQL", []string{"--engine=mysql", "--builtin=oltp_read_only", "--latency-limit=5ms"}, "no latency limit"},
		{"PgBouncer on MySQL", []string{"--engine=mysql", "--builtin=oltp_read_only", "--pooler=pgbouncer"}, "--pooler=pgbouncer: PostgreSQL's"},
		{"the MySQL pooler on PostgreSQL", []string{"--pooler=mysqlpool", "--pooler-metrics=127.0.0.1:9128"}, "MySQL's pooler, not PostgreSQL's"},
		{"the MySQL pooler without its counters", []string{"--engine=mysql", "--builtin=oltp_read_only", "--pooler=mysqlpool"},
			"needs --pooler-metrics"},
		{"pods on MySQL", []string{"--engine=mysql", "--builtin=oltp_read_only", "--pods=2", "--clients=2",
			"--result-configmap=r"}, "share a load between pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Later flags override earlier ones, and the valid base keeps each case to one fault.
			_, err := parse(append(append([]string(nil), valid...), tt.args...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	for name, args := range map[string][]string{
		"no tunnels flag": {"--builtin=select-only", "--duration=10s"},
		"no load":         {"--tunnels=1"},
		"load with init":  {"--init", "--tunnels=1", "--clients=4"},
	} {
		if _, err := parse(args); err == nil {
			t.Errorf("%s: %q was accepted", name, args)
		}
	}
}

// TestLinkProxyArgs: the link proxy's flags read back as the proxy they render, and a proxy
// without an upstream or with more jitter than RTT is refused.
func TestLinkProxyArgs(t *testing.T) {
	parseProxy := func(args []string) (LinkProxy, error) {
		fs := flag.NewFlagSet("link", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		get := BindLinkProxyFlags(fs)
		if err := fs.Parse(args); err != nil {
			return LinkProxy{}, err
		}
		return get()
	}
	p := LinkProxy{Listen: "127.0.0.1:14432", Upstream: "db-rw.ns.svc:5432", Stats: "127.0.0.1:14433",
		Link: Link{RTT: 20 * time.Millisecond, Jitter: 2 * time.Millisecond, BitsPerSecond: 1_000_000_000}}
	if got, err := parseProxy(p.Args()); err != nil || got != p {
		t.Errorf("round trip of %q = %+v, %v", p.Args(), got, err)
	}
	for name, args := range map[string][]string{
		"no upstream":       {"--listen=127.0.0.1:1"},
		"jitter over rtt":   {"--listen=127.0.0.1:1", "--upstream=db:5432", "--rtt=1ms", "--jitter=2ms"},
		"a positional word": {"--listen=127.0.0.1:1", "--upstream=db:5432", "extra"},
	} {
		if _, err := parseProxy(args); err == nil {
			t.Errorf("%s: %q was accepted", name, args)
		}
	}
}

func TestTunnelLogFile(t *testing.T) {
	if got := TunnelLogFile(SSHLogDir, 3); got != "/run/tunnelbench/ssh/tunnel-3.log" {
		t.Errorf("TunnelLogFile = %q", got)
	}
}

// TestLinkHeldText: the link's counters read back, and what is not them is refused briefly.
func TestLinkHeldText(t *testing.T) {
	text := LinkHeldText(1500 * time.Millisecond)
	if got, err := ParseLinkHeld(text); err != nil || got != 1500*time.Millisecond {
		t.Errorf("ParseLinkHeld(%q) = %v, %v", text, got, err)
	}
	for _, bad := range []string{"", "held_nanoseconds -1\n", "<html>", strings.Repeat("x", 100)} {
		if _, err := ParseLinkHeld(bad); err == nil || len(err.Error()) > 120 {
			t.Errorf("ParseLinkHeld(%q): %v", bad, err)
		}
	}
}

// TestThreadsURL: a part's sample with its threads is the same URL with the threads query, after
// the node reader's pod parameter when there is one.
func TestThreadsURL(t *testing.T) {
	for _, tc := range []struct {
		part CPUPart
		want string
	}{
		{CPUPart{Name: "tunnel-0", Port: 14500}, "http://127.0.0.1:14500" + CPUStatsPath + "?threads=1"},
		{CPUPart{Name: "server", Host: "10.0.0.7", Port: NodeReaderPort, Pod: "0f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c"},
			"http://10.0.0.7:14700" + CPUStatsPath + "?pod=0f3c2a9e-5b7d-4c1e-9a2b-3d4e5f6a7b8c&threads=1"},
	} {
		if got := tc.part.ThreadsURL(); got != tc.want {
			t.Errorf("ThreadsURL() = %q, want %q", got, tc.want)
		}
	}
}
