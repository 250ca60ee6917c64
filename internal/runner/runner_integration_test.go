package runner

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/runner/cgroupcpu"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// These tests run the runner against a real PostgreSQL started for them (initdb in a temporary
// folder, TLS with certificates made by the test) and real pgbench.

func startServer(t *testing.T, opts pgtest.Options) *pgtest.Server {
	t.Helper()
	s, err := pgtest.StartTemp(opts)
	if err != nil {
		t.Fatalf("cannot start PostgreSQL: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// setEnv sets libpq's variables for the runner and the pgbench it starts.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func runOnce(t *testing.T, opts Options) (*report.Report, string, error) {
	t.Helper()
	var out bytes.Buffer
	if opts.Generator == nil {
		opts.Generator = pgbench.Generator{Path: "pgbench"}
	}
	opts.Stdout, opts.Stderr = &out, &out
	if opts.TerminationLog == "" {
		opts.TerminationLog = filepath.Join(t.TempDir(), "termination-log")
	}
	opts.TransactionLogDir = filepath.Join(t.TempDir(), "transactions")
	if opts.Run.WaitTimeout == 0 {
		opts.Run.WaitTimeout = 10 * time.Second
	}
	opts.RetryEvery = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, opts)
	msg, readErr := os.ReadFile(opts.TerminationLog)
	if readErr != nil {
		t.Fatalf("no termination message written: %v", readErr)
	}
	if decoded, derr := report.Decode(string(msg)); derr != nil || (decoded.Failure == nil) != (rep.Failure == nil) {
		t.Fatalf("termination message %q does not match the report (%v)", msg, derr)
	}
	return rep, out.String(), err
}

// assertLatency checks the run's histogram against pgbench's own count: every transaction logged
// (a short run logs them all), and percentiles in order.
func assertLatency(t *testing.T, rep *report.Report) {
	t.Helper()
	l := rep.Latency
	if l == nil || l.SamplingRate != 1 || l.Samples != rep.Result.Transactions || l.Failed != 0 {
		t.Fatalf("latency %+v for %d transactions", l, rep.Result.Transactions)
	}
	h, err := latency.Merge(l.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	p, err := latency.PercentilesOf(h)
	if err != nil || p.Count != l.Samples || p.P50 <= 0 || p.P50 > p.P99 || p.P99 > p.Max {
		t.Errorf("percentiles %+v (%v)", p, err)
	}
	// pgbench's average lies within the distribution.
	if avg := rep.Result.LatencyAvgMs; avg < float64(h.Min())/1000-0.001 || avg > p.Max {
		t.Errorf("pgbench's average %.3f ms lies outside the histogram's [%d µs, %.3f ms]", avg, h.Min(), p.Max)
	}
}

// sslSessions counts, from the server's side, the sessions of an application by TLS use.
func sslSessions(ctx context.Context, s *pgtest.Server, app string) (withTLS, without int, err error) {
	cfg, err := pgx.ParseConfig(s.ConnString("require"))
	if err != nil {
		return 0, 0, err
	}
	// A name of its own: pgx reads PGAPPNAME, which the test sets to the watched application's
	// name, and the backend of the previous sample (with TLS) may not have left pg_stat_activity
	// yet when the next sample counts (seen once: "1 with TLS" for sslmode=disable).
	cfg.RuntimeParams["application_name"] = "tb-it-watcher"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = conn.Close(ctx) }()
	err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl)
		FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
		WHERE a.application_name = $1 AND a.pid <> pg_backend_pid()`, app).Scan(&withTLS, &without)
	return withTLS, without, err
}

// watchSessions samples the server's view of an application's sessions while a run lasts and
// returns the largest counts seen.
func watchSessions(s *pgtest.Server, app string) (stop func() (maxTLS, maxPlain int)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var maxTLS, maxPlain int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			w, wo, err := sslSessions(ctx, s, app)
			if err == nil {
				maxTLS, maxPlain = max(maxTLS, w), max(maxPlain, wo)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() (int, int) { cancel(); wg.Wait(); return maxTLS, maxPlain }
}

func TestRunDirectAndTLSAgainstRealPostgres(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})

	setEnv(t, s.Env("disable"))
	if rep, out, err := runOnce(t, Options{Run: runspec.Run{Init: true, Scale: 1, Tunnels: 1}}); err != nil {
		t.Fatalf("pgbench -i through the runner failed: %v\n%s", err, out)
	} else if rep.Result != nil || !strings.Contains(out, "done in") {
		t.Fatalf("init report %+v, output %q", rep, out)
	}

	tests := []struct {
		sslmode string
		wantTLS bool
	}{
		{"disable", false},
		{"require", true},
		{"verify-ca", true},
		{"verify-full", true},
	}
	for _, tt := range tests {
		t.Run(tt.sslmode, func(t *testing.T) {
			app := "tb-it-" + tt.sslmode
			setEnv(t, s.Env(tt.sslmode))
			t.Setenv("PGAPPNAME", app)
			stop := watchSessions(s, app)
			rep, out, err := runOnce(t, Options{Run: runspec.Run{Tunnels: 1, Load: runspec.Load{Builtin: "select-only",
				Protocol: "prepared", Clients: 2, Threads: 1, Duration: 3 * time.Second, ProgressInterval: time.Second}}})
			maxTLS, maxPlain := stop()
			if err != nil {
				t.Fatalf("run failed: %v\n%s", err, out)
			}
			res := rep.Result
			if res == nil || res.TPS <= 0 || res.Transactions <= 0 || res.Clients != 2 || res.LatencyStddevMs == nil {
				t.Fatalf("result %+v", res)
			}
			if len(res.Progress) < 2 || !strings.Contains(out, "progress: ") {
				t.Errorf("progress not streamed or parsed: %d points", len(res.Progress))
			}
			assertLatency(t, rep)
			if rep.StartTime.IsZero() || !rep.EndTime.After(rep.StartTime) {
				t.Errorf("run bounds %v..%v", rep.StartTime, rep.EndTime)
			}
			// The server saw the pgbench sessions, with TLS exactly when asked for.
			if tt.wantTLS && (maxTLS == 0 || maxPlain != 0) || !tt.wantTLS && (maxPlain == 0 || maxTLS != 0) {
				t.Errorf("server-side sessions of %s: %d with TLS, %d without", app, maxTLS, maxPlain)
			}
			if !strings.HasPrefix(rep.ServerVersion, "1") || !strings.Contains(rep.ServerVersion, ".") {
				t.Errorf("server version %q", rep.ServerVersion)
			}
			if !strings.HasPrefix(rep.PgbenchVersion, "pgbench (PostgreSQL) ") {
				t.Errorf("pgbench version %q", rep.PgbenchVersion)
			}
			// The runner's own evidence agrees.
			if tt.wantTLS != (rep.TLS != nil) || tt.wantTLS && !strings.HasPrefix(rep.TLS.Version, "TLSv1.") {
				t.Errorf("runner's TLS evidence = %+v", rep.TLS)
			}
			if strings.Contains(out, s.Password) || strings.Contains(rep.Command, s.Password) || strings.Contains(rep.Executed, s.Password) {
				t.Error("the password leaked into the output or the command")
			}
		})
	}

	t.Run("inline script and reconnect, after a warm-up", func(t *testing.T) {
		setEnv(t, s.Env("require"))
		t.Setenv(runspec.ScriptEnv, "select 1;\n")
		begin := time.Now()
		var stored []byte
		store := func(_ context.Context, b []byte) error { stored = b; return nil }
		rep, out, err := runOnce(t, Options{Store: store, Run: runspec.Run{Tunnels: 1, Warmup: time.Second, Load: runspec.Load{
			Script: true, Reconnect: true, Clients: 2, Threads: 1, Transactions: 50, ProgressInterval: time.Second}}})
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		// Exactly the measured transactions: the warm-up's are not counted.
		if r := rep.Result; r.Transactions != 100 || !r.Reconnect || r.TPSIncludingConnections == nil || r.ConnectionTimeMs <= 0 {
			t.Errorf("result %+v", r)
		}
		if !strings.Contains(out, "[warm-up] ") || rep.StartTime.Sub(begin) < time.Second {
			t.Errorf("no warm-up before the measured run (started %s after the runner)\n%s", rep.StartTime.Sub(begin), out)
		}
		assertLatency(t, rep)
		// The whole report is stored, histogram included.
		if whole, err := report.Decode(string(stored)); err != nil || whole.Latency == nil ||
			whole.Latency.Histogram != rep.Latency.Histogram || whole.Result.Transactions != 100 {
			t.Errorf("stored report %q (%v)", stored, err)
		}
	})

	t.Run("a report that cannot be stored fails the run", func(t *testing.T) {
		setEnv(t, s.Env("require"))
		store := func(context.Context, []byte) error { return errors.New("configmaps is forbidden") }
		rep, _, err := runOnce(t, Options{Store: store, Run: runspec.Run{Tunnels: 1, Load: runspec.Load{Builtin: "select-only",
			Clients: 1, Threads: 1, Transactions: 10}}})
		if err == nil || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "configmaps is forbidden") {
			t.Errorf("err %v, failure %+v", err, rep.Failure)
		}
	})
}

// TestRunFailuresAreClassified checks that each way of failing reaches the report with its reason
// and pgbench's or the server's own words.
func TestRunFailuresAreClassified(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	tlsOnly := startServer(t, pgtest.Options{RequireTLS: true})
	clearText := startServer(t, pgtest.Options{HostAuth: "password"})
	tests := []struct {
		name       string
		server     *pgtest.Server
		sslmode    string
		override   map[string]string
		load       runspec.Load
		wait       time.Duration
		wantReason string
		wantText   string
	}{
		{name: "wrong password", server: s, sslmode: "disable", override: map[string]string{"PGPASSWORD": "nope"},
			wantReason: conditions.ReasonAuthenticationFailed, wantText: "password authentication failed"},
		{name: "unknown database", server: s, sslmode: "disable", override: map[string]string{"PGDATABASE": "missing"},
			wantReason: conditions.ReasonConnectionRejected, wantText: `database "missing" does not exist`},
		{name: "pg_hba requires TLS", server: tlsOnly, sslmode: "disable",
			wantReason: conditions.ReasonConnectionRejected, wantText: "no pg_hba.conf entry"},
		// A server (or a listener in its place) that asks for the password in clear text over a
		// plain connection: the preflight does not send it, and pgbench never connects.
		{name: "a clear-text password asked without TLS", server: clearText, sslmode: "disable",
			wantReason: conditions.ReasonClearTextPassword, wantText: "use a tls transport"},
		{name: "untrusted server certificate", server: s, sslmode: "verify-full", override: map[string]string{"PGSSLROOTCERT": s.OtherCAFile},
			wantReason: conditions.ReasonTLSError, wantText: "certificate"},
		{name: "nothing listens", server: s, sslmode: "disable", override: map[string]string{"PGPORT": "1"}, wait: time.Second,
			wantReason: conditions.ReasonServerUnreachable, wantText: "did not answer within 1s"},
		{name: "a script that runs a shell", server: s, sslmode: "disable",
			override:   map[string]string{runspec.ScriptEnv: "\\shell env\nselect 1;"},
			load:       runspec.Load{Script: true, Duration: time.Second},
			wantReason: conditions.ReasonInvalidSpec, wantText: `uses pgbench's \shell`},
		{name: "pgbench error", server: s, sslmode: "disable", override: map[string]string{runspec.ScriptEnv: "select 1/0;"},
			load:       runspec.Load{Script: true, Duration: time.Second},
			wantReason: conditions.ReasonPgbenchError, wantText: "division by zero"},
		// The server ends the session under pgbench, as a restart or a failover does.
		{name: "a connection the server ends", server: s, sslmode: "disable",
			override:   map[string]string{runspec.ScriptEnv: "select pg_terminate_backend(pg_backend_pid());"},
			load:       runspec.Load{Script: true, Duration: 5 * time.Second},
			wantReason: conditions.ReasonConnectionLost, wantText: "the connection to the server was lost during the run"},
		// A server that stops answering: every transaction waits 30 s, so no progress report of
		// the 20 s load shows one completed, and the watch stops pgbench after 2 s of it.
		{name: "a stalled load", server: s, sslmode: "disable", override: map[string]string{runspec.ScriptEnv: "select pg_sleep(30);"},
			load: runspec.Load{Script: true, Clients: 2, Threads: 1, Duration: 20 * time.Second, ProgressInterval: time.Second,
				StallTimeout: 2 * time.Second},
			wantReason: conditions.ReasonStalled,
			wantText:   "no transaction completed for 2s (spec.load.stallTimeout): pgbench stopped 2s into the measured load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.server.Env(tt.sslmode))
			setEnv(t, tt.override)
			load := tt.load
			if load == (runspec.Load{}) {
				load = runspec.Load{Builtin: "select-only", Duration: time.Second}
			}
			rep, out, err := runOnce(t, Options{Run: runspec.Run{Load: load, WaitTimeout: tt.wait, Tunnels: 1}})
			var fe *FailureError
			if !errors.As(err, &fe) || rep.Failure == nil {
				t.Fatalf("run error = %v (output %q), want a classified failure", err, out)
			}
			if rep.Failure.Reason != tt.wantReason || !strings.Contains(rep.Failure.Message, tt.wantText) {
				t.Errorf("failure = %s: %s, want %s containing %q", rep.Failure.Reason, rep.Failure.Message, tt.wantReason, tt.wantText)
			}
			if strings.Contains(rep.Failure.Message, tt.server.Password) {
				t.Error("the password leaked into the failure message")
			}
		})
	}
}

// TestClearTextPasswordOverTLS: the same server's clear-text request over TLS is answered only when
// the TLS session verified the server (then the password reaches the server it was meant for),
// and the run completes; over TLS that verifies nothing it is refused like over a plain socket:
// whoever answered the handshake would read it.
func TestClearTextPasswordOverTLS(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{HostAuth: "password"})
	for _, tc := range []struct{ sslmode, refused string }{
		{"require", "tls transport with sslMode verify-ca or verify-full"},
		{"verify-ca", ""},
		{"verify-full", ""},
	} {
		t.Run(tc.sslmode, func(t *testing.T) {
			setEnv(t, s.Env(tc.sslmode))
			t.Setenv(runspec.ScriptEnv, "select 1;")
			rep, out, err := runOnce(t, Options{Run: runspec.Run{Load: runspec.Load{Script: true, Duration: time.Second}, Tunnels: 1}})
			if tc.refused == "" {
				if err != nil || rep.Failure != nil {
					t.Fatalf("run over verified TLS failed: %v %+v\n%s", err, rep.Failure, out)
				}
				return
			}
			if rep.Failure == nil || rep.Failure.Reason != conditions.ReasonClearTextPassword ||
				!strings.Contains(rep.Failure.Message, tc.refused) || strings.Contains(rep.Failure.Message, s.Password) {
				t.Fatalf("over TLS that verifies nothing: %v %+v, want %s saying %q", err, rep.Failure,
					conditions.ReasonClearTextPassword, tc.refused)
			}
		})
	}
}

// TestRunMeasuresItsContainersCPU: the runner reads its cgroup at the ends of the measured window.
// Here the runner is this test process, in this machine's cgroup: what it reports covers at least
// the CPU its pgbench children used (getrusage, which the kernel fills as they exit) and at most
// every core for the window.
func TestRunMeasuresItsContainersCPU(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	t.Setenv(runspec.ScriptEnv, "select 1;")
	root, err := cgroupcpu.Self(t.TempDir())
	if err != nil {
		t.Skipf("no cgroup to read: %v", err)
	}
	// A sidecar that answers (this machine's cgroup again, served as a sidecar serves its own) and
	// one that does not: the first is reported, the second said unknown.
	served := httptest.NewServer(cgroupcpu.Handler(root))
	defer served.Close()
	port := served.Listener.Addr().(*net.TCPAddr).Port
	silent, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// A slow one answers, but 400 ms late at the end: 0.4 s of a 3 s window is more than the 10 %
	// its samples may miss the window by. The others, asked at the same time, are not delayed.
	var asked atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) > 2 { // after the runner's wait for it and the window's first sample
			time.Sleep(400 * time.Millisecond)
		}
		cgroupcpu.Handler(root).ServeHTTP(w, r)
	}))
	defer slow.Close()
	parts := []runspec.CPUPart{{Name: "tunnel-0", Port: port}, {Name: "link", Port: silent},
		{Name: "gateway", Host: "127.0.0.1", Port: slow.Listener.Addr().(*net.TCPAddr).Port}}
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
	rep, out, err := runOnce(t, Options{CgroupRoot: root, PartsWait: time.Second, Run: runspec.Run{Tunnels: 1, CPUParts: parts,
		Load: runspec.Load{Script: true, Clients: 2, Threads: 2, Duration: 3 * time.Second}}})
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	if err != nil || rep.CPU == nil {
		t.Fatalf("run: %v, CPU %+v\n%s", err, rep.CPU, out)
	}
	children := cpuSeconds(after) - cpuSeconds(before)
	used := rep.CPU.UserSeconds + rep.CPU.SystemSeconds
	window := rep.EndTime.Sub(rep.StartTime).Seconds()
	t.Logf("cgroup v%d: %.3f s of CPU in a %.3f s window; pgbench's own %.3f s", rep.CPU.CgroupVersion, used, rep.CPU.WindowSeconds, children)
	if used < 0.9*children-0.02 || used > rep.CPU.WindowSeconds*float64(runtime.NumCPU())*1.05 {
		t.Errorf("%.3f s of CPU reported, pgbench's children used %.3f s, window %.3f s", used, children, rep.CPU.WindowSeconds)
	}
	if rep.CPU.WindowSeconds < window-0.1 || rep.CPU.WindowSeconds > window+1 {
		t.Errorf("CPU window %.3f s against the measured window %.3f s", rep.CPU.WindowSeconds, window)
	}
	if len(rep.Sidecars) != 1 || rep.Sidecars[0].Part != "tunnel-0" ||
		rep.Sidecars[0].UserSeconds+rep.Sidecars[0].SystemSeconds < 0.9*children-0.02 {
		t.Errorf("sidecars %+v", rep.Sidecars)
	}
	if !strings.Contains(out, "part link does not answer") || !strings.Contains(out, "the CPU time of link is not known") {
		t.Errorf("the silent sidecar is not said:\n%s", out)
	}
	// The machine's own interface counters (loopback aside: the test's PostgreSQL is not on them).
	if rep.Wire == nil || rep.Wire.WindowSeconds <= 0 {
		t.Errorf("no bytes on the wire: %+v", rep.Wire)
	}
	if len(rep.Unmeasured) != 2 || rep.Unmeasured[0].Part != "link" || rep.Unmeasured[1].Part != "gateway" ||
		!strings.Contains(rep.Unmeasured[1].Reason, "from the window's ends, more than 10 %") {
		t.Errorf("unmeasured %+v", rep.Unmeasured)
	}
}

func cpuSeconds(r syscall.Rusage) float64 {
	return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
}

// TestRunAwaitsTheLink: a run whose link is set up from outside waits for it before its first
// connection, and fails with the waiting's reason, having measured nothing, when it never comes.
func TestRunAwaitsTheLink(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	setEnv(t, map[string]string{runspec.ScriptEnv: "select 1;"})
	run := runspec.Run{Load: runspec.Load{Script: true, Duration: time.Second}, Tunnels: 1,
		Link: runspec.Link{BitsPerSecond: 1_000_000_000}, ResultConfigMap: "r", AwaitLink: true}
	never := func(context.Context, time.Duration, time.Duration) error {
		return &FailureError{Reason: conditions.ReasonNetworkEmulationFailed, Message: "no mark"}
	}
	rep, _, err := runOnce(t, Options{Run: run, AwaitLink: never})
	if err == nil || rep.Failure == nil || rep.Failure.Reason != conditions.ReasonNetworkEmulationFailed {
		t.Fatalf("never marked: %v %+v", err, rep.Failure)
	}
	if rep.ServerVersion != "" || rep.Result != nil || rep.Link != nil {
		t.Errorf("the run reached the server before its link was in place: %+v", rep)
	}
	awaited := false
	rep, out, err := runOnce(t, Options{Run: run, AwaitLink: func(context.Context, time.Duration, time.Duration) error {
		awaited = true
		return nil
	}})
	if err != nil || !awaited || rep.Result == nil {
		t.Fatalf("marked: awaited %v, %v, output %q", awaited, err, out)
	}
}

// TestRunPublishesLiveProgress: while real pgbench runs, each progress report is published as it
// comes, the warm-up's marked as such, with the figures pgbench printed.
func TestRunPublishesLiveProgress(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	setEnv(t, map[string]string{runspec.ScriptEnv: "select 1;"})
	var mu sync.Mutex
	var got []runspec.Live
	publish := func(_ context.Context, l runspec.Live) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, l)
		return nil
	}
	run := runspec.Run{Load: runspec.Load{Script: true, Clients: 2, Threads: 1, Duration: 3 * time.Second,
		ProgressInterval: time.Second}, Warmup: 2 * time.Second, Tunnels: 1}
	rep, out, err := runOnce(t, Options{Run: run, Live: publish})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	phases := map[string]int{}
	for _, l := range got {
		phases[l.Phase]++
		if l.TPS <= 0 || l.ElapsedSeconds <= 0 || l.Time.IsZero() {
			t.Errorf("live figure %+v", l)
		}
		if l.Phase == runspec.LiveLoad && l.DurationSeconds != 3 {
			t.Errorf("the load's duration %v", l.DurationSeconds)
		}
	}
	// Every second of both phases, give or take the last report, which pgbench may skip.
	if phases[runspec.LiveWarmup] < 1 || phases[runspec.LiveLoad] < 2 {
		t.Errorf("published %v from output %q", phases, out)
	}
	if last := got[len(got)-1]; last.Phase != runspec.LiveLoad || rep.Result == nil {
		t.Errorf("last figure %+v", last)
	}
}

// TestRunAsOnePodOfSeveral: pod 1 of 2 runs its half of the clients against real PostgreSQL, after
// marking itself ready and waiting for the start (after its warm-up, before its measured load);
// only pod 0 runs the storm; a pod without its index fails before any load.
func TestRunAsOnePodOfSeveral(t *testing.T) {
	pgtest.SkipIfShort(t)
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	setEnv(t, map[string]string{runspec.ScriptEnv: "select 1;"})
	run := runspec.Run{Load: runspec.Load{Script: true, Clients: 4, Threads: 2, Duration: time.Second}, Tunnels: 1,
		Warmup: time.Second, Storm: 10, ResultConfigMap: "r", Pods: 2}
	var awaitedAt time.Time
	await := func(context.Context, time.Duration, time.Duration) error {
		awaitedAt = time.Now()
		return nil
	}
	// The other pod covered the middle half of this one's stretch.
	var covered latency.Span
	window := func(_ context.Context, c latency.Span, _, _ time.Duration) (latency.Span, error) {
		covered = c
		quarter := (c.To - c.From) / 4
		return latency.Span{From: c.From + quarter, To: c.To - quarter}, nil
	}
	for _, index := range []int{1, 0} {
		rep, out, err := runOnce(t, Options{Run: run, PodIndex: index, AwaitStart: await, AwaitWindow: window})
		if err != nil || rep.Result == nil {
			t.Fatalf("pod %d: %v, output %q", index, err, out)
		}
		if rep.Result.Clients != 2 || rep.Result.Threads != 1 || !strings.Contains(rep.Command, "-c 4 -j 2") {
			t.Errorf("pod %d ran %d clients, %d threads (command %q), want its half of 4 and 2", index, rep.Result.Clients,
				rep.Result.Threads, rep.Command)
		}
		// What ran is recorded as it ran: this pod's share, with the transaction log the runner adds.
		if !strings.HasPrefix(rep.Executed, "pgbench ") || !strings.Contains(rep.Executed, "-c 2 -j 1") ||
			!strings.Contains(rep.Executed, " -l --log-prefix=") || strings.Contains(rep.Executed, ";") {
			t.Errorf("pod %d executed %q, want its one pgbench process with its share and the transaction log", index, rep.Executed)
		}
		if awaitedAt.IsZero() || rep.StartTime.Before(awaitedAt) || !strings.Contains(out, "starts its load with the others") {
			t.Errorf("pod %d's measured load started at %v, before its start (%v)", index, rep.StartTime, awaitedAt)
		}
		if (rep.Storm != nil) != (index == 0) {
			t.Errorf("pod %d: storm %+v", index, rep.Storm)
		}
		checkWindow(t, rep, covered)
	}
	rep, _, err := runOnce(t, Options{Run: run, PodIndex: -1, AwaitStart: await, AwaitWindow: window})
	if err == nil || rep.Failure == nil || !strings.Contains(rep.Failure.Message, "no index") || rep.Result != nil {
		t.Errorf("a pod without its index: %v %+v", err, rep.Failure)
	}
}

// checkWindow: a pod's figures are cut to the middle half of the stretch its load covered, which
// lies within its pgbench run: about half its transactions, every one in the cut histogram.
func checkWindow(t *testing.T, rep *report.Report, covered latency.Span) {
	t.Helper()
	w, res, l := rep.Window, rep.Result, rep.Latency
	if w == nil || l == nil || covered.From < rep.StartTime.UnixMicro() || covered.To > rep.EndTime.UnixMicro() {
		t.Fatalf("window %+v, latency %+v, covered %+v within the run %v–%v", w, l, covered, rep.StartTime, rep.EndTime)
	}
	if l.Samples != w.Transactions || w.Seconds() <= 0 || math.Abs(w.TPS-float64(w.Transactions)/w.Seconds()) > 1e-6 {
		t.Errorf("window %+v (%.3f s) with %d latencies, want one a transaction", w, w.Seconds(), l.Samples)
	}
	if share := float64(w.Transactions) / float64(res.Transactions); share < 0.3 || share > 0.7 {
		t.Errorf("the window's middle half holds %d of %d transactions", w.Transactions, res.Transactions)
	}
}
