package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/api/scripts"
	"github.com/tunnelbench/tunnelbench/internal/analysis/latency"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/runner/redact"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshkeys"
)

// Options configure one run.
type Options struct {
	// Run is what the operator asked for (the flags of `tunnelbench-runner run`), validated by the
	// caller: runspec.Flags.Run does.
	Run runspec.Run
	// Generator is the engine's load generator; nil means pgbench from the PATH.
	Generator engine.Generator
	// RetryEvery is the pause between connection attempts while waiting.
	RetryEvery time.Duration
	// TransactionLogDir is where the load generator's transaction logs go; empty means
	// runspec.TransactionLogDir.
	TransactionLogDir string
	// TerminationLog receives the encoded report; empty to skip.
	TerminationLog string
	// Store, when set, keeps the whole report (report.Marshal) where the operator reads it: the
	// run's result ConfigMap. A run whose report cannot be stored fails.
	Store func(ctx context.Context, report []byte) error
	// AwaitLink, for a run with Run.AwaitLink, blocks until the operator says the emulated link
	// is in place (ResultConfigMap.AwaitLink), and fails when it never does.
	AwaitLink func(ctx context.Context, wait, every time.Duration) error
	// Live, when set, receives the load's progress at each of the generator's progress reports
	// (ResultConfigMap.StoreLive), for the operator's live view.
	Live func(ctx context.Context, l runspec.Live) error
	// PodIndex is this pod's index in a run of several pods (Run.Pods; runspec.PodIndexEnv).
	PodIndex int
	// AwaitStart, for a run of several pods, marks this pod ready and blocks until the moment
	// the operator starts every pod's measured load (ResultConfigMap.AwaitStart).
	AwaitStart func(ctx context.Context, wait, every time.Duration) error
	// AwaitWindow, for a run of several pods, publishes the stretch this pod's transactions
	// covered and returns the one every pod covered (ResultConfigMap.AwaitWindow).
	AwaitWindow func(ctx context.Context, covered latency.Span, wait, every time.Duration) (latency.Span, error)
	// Stdout and Stderr receive the load generator's output as it runs.
	Stdout, Stderr io.Writer
	// PartsWait bounds the wait for the parts to sample before the run (0: 15 s).
	PartsWait time.Duration
	// NetDev is where the runner reads its pod's interface counters; empty means netdev.Path.
	NetDev string
	// CgroupRoot is where the runner reads its container's CPU accounting; empty means
	// cgroupcpu.Root.
	CgroupRoot string
	// Redactor masks the secrets the runner holds (Secrets) in its report and its output, before
	// either leaves the process; nil masks nothing.
	Redactor *redact.Redactor
}

// Secrets are the secret values this runner holds: the server's password from libpq's environment,
// the TLS client key and the ssh client key, where they are mounted.
func Secrets() *redact.Redactor {
	values := []string{os.Getenv("PGPASSWORD")}
	values = append(values, redact.KeyMaterial(os.Getenv("PGSSLKEY"))...)
	values = append(values, redact.KeyMaterial(filepath.Join(runspec.SSHClientDir, sshkeys.ClientKey))...)
	return redact.New(values...)
}

// Run runs the load once and returns its report. The report is also written to the termination log,
// whatever the outcome; the returned error is non-nil when the run failed.
func Run(ctx context.Context, opts Options) (*report.Report, error) {
	if !opts.Redactor.Empty() {
		stdout, stderr := opts.Redactor.Writer(orDiscard(opts.Stdout)), opts.Redactor.Writer(orDiscard(opts.Stderr))
		defer func() { _, _ = stdout.Flush(), stderr.Flush() }()
		opts.Stdout, opts.Stderr = stdout, stderr
	}
	if opts.Generator == nil {
		opts.Generator = pgbench.Generator{}
	}
	rep := execute(ctx, opts)
	// Masked before bounded: a cut could leave half a secret that no longer matches.
	rep.Texts(func(_, s string) string { return opts.Redactor.String(s) })
	rep.Bound()
	if opts.Store != nil {
		b, err := report.Marshal(*rep)
		if err == nil {
			err = opts.Store(ctx, b)
		}
		if err != nil && rep.Failure == nil {
			rep.Failure = &report.Failure{Reason: conditions.ReasonJobFailed,
				Message: fmt.Sprintf("the run succeeded but its report could not be stored: %v", err)}
		}
	}
	if opts.TerminationLog != "" {
		b, err := report.Encode(*rep)
		if err == nil {
			err = os.WriteFile(opts.TerminationLog, b, 0o644)
		}
		if err != nil {
			return rep, fmt.Errorf("cannot write the termination message: %w", err)
		}
	}
	if rep.Failure != nil {
		return rep, &FailureError{Reason: rep.Failure.Reason, Message: rep.Failure.Message}
	}
	return rep, nil
}

func execute(ctx context.Context, opts Options) *report.Report {
	run, gen := opts.Run, opts.Generator
	n := max(run.Tunnels, 1)
	r := tunnelLogs{dir: run.SSHLogDir, count: n, generator: gen}
	if run.SSHLogDir != "" {
		r.port = run.TunnelPort
	}
	// Parallel load generator processes share the container's output.
	stream := &lockedWriter{w: orDiscard(opts.Stdout)}
	// The whole run's command, before any split across tunnels: what the user asked for.
	rep := &report.Report{Command: engine.CommandLine(gen.Name(), gen.LoadArgs(run.Load))}
	if run.Init {
		rep.Command = initCommand(gen, run.Scale)
	}
	fail := func(err error) *report.Report {
		var fe *FailureError
		if !errors.As(err, &fe) {
			fe = &FailureError{Reason: conditions.ReasonPgbenchError, Message: err.Error()}
		}
		rep.Failure = &report.Failure{Reason: fe.Reason, Message: fe.Message}
		return rep
	}
	if run.Load.Script {
		if err := writeScript(gen); err != nil {
			return fail(err)
		}
	}
	if run.Pods > 1 {
		if opts.PodIndex < 0 || opts.PodIndex >= run.Pods || opts.AwaitStart == nil || opts.AwaitWindow == nil {
			return fail(fmt.Errorf("runner pod %d of %d: no index in $%s or no result ConfigMap to meet the others in",
				opts.PodIndex, run.Pods, runspec.PodIndexEnv))
		}
		// This pod's share; the report's command stays the whole run's.
		run.Load = engine.SplitLoad(run.Load, run.Pods)[opts.PodIndex]
		if opts.PodIndex > 0 {
			run.Storm = 0
		}
	}
	wait, retry := run.WaitTimeout, opts.RetryEvery
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	if retry <= 0 {
		retry = time.Second
	}
	if run.AwaitLink {
		// Before the first connection: nothing crosses the path before the link is in place.
		if opts.AwaitLink == nil {
			return fail(&FailureError{Reason: conditions.ReasonNetworkEmulationFailed,
				Message: "the run must wait for its emulated link but the runner has no result ConfigMap to read"})
		}
		if err := opts.AwaitLink(ctx, wait, retry); err != nil {
			return fail(err)
		}
		fmt.Fprintln(stream, "tunnelbench-runner: the emulated link is in place")
	}
	// Before anything is measured: a part that is not reachable yet (a NetworkPolicy that does not
	// admit this new pod for a second or so, a sidecar still starting) is waited for, not lost.
	awaitParts(ctx, stream, run.CPUParts, cmp.Or(opts.PartsWait, partsWait))
	conn := engine.ConnectionFrom(os.Getenv)
	sess, err := preflightEngine(ctx, run.Engine, conn, wait, retry)
	if err != nil {
		var fe *FailureError
		if errors.As(err, &fe) && fe.Reason == conditions.ReasonServerUnreachable {
			// Through a tunnel, "unreachable" is usually the tunnel: say what ssh said.
			return fail(r.explain(0, 1, err))
		}
		return fail(err)
	}
	rep.TLS, rep.ServerVersion = sess.serverTLS, sess.serverVersion
	rep.PgbenchVersion = gen.Version(ctx)
	if err := gen.Prepare(conn, run.Scale); err != nil {
		return fail(err)
	}

	if run.Init && run.Copy.Set() {
		rep.Command = "create " + run.Copy.Table()
		rep.StartTime = time.Now().UTC()
		created, err := createCopySet(ctx, sess.config, run.Copy)
		rep.EndTime = time.Now().UTC()
		if err != nil {
			return fail(&FailureError{Reason: conditions.ReasonPgbenchError,
				Message: fmt.Sprintf("cannot create the copy data set %s: %v", run.Copy.Table(), err)})
		}
		fmt.Fprintf(stream, "tunnelbench-runner: copy data set %s: created %v (kept from an earlier benchmark: %v)\n",
			run.Copy.Table(), created, !created)
		return rep
	}
	if run.Init {
		rep.StartTime = time.Now().UTC()
		err := initialize(ctx, opts, stream)
		rep.EndTime = time.Now().UTC()
		if err != nil {
			return fail(err)
		}
		return rep
	}

	if run.Link.Emulated() {
		// Before the warm-up: the ssh tunnels' and the pooler's connections are as cold as a
		// client's first ones would be, which the connection time is meant to show.
		if rep.Link, err = measureLink(ctx, sess.probe, run.Link); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stream, "tunnelbench-runner: link measured: rtt %.3f ms, connect %.3f ms, %d bit/s\n",
			rep.Link.RTTMs, rep.Link.ConnectMs, rep.Link.BitsPerSecond)
	}

	if run.Copy.Set() {
		rep.Command = fmt.Sprintf("COPY %s TO STDOUT (FORMAT binary)", run.Copy.Table())
		wire := startWire(opts.NetDev)
		rep.StartTime = time.Now().UTC()
		rep.Copy, err = copyOnce(ctx, sess.config, run.Copy)
		rep.EndTime = time.Now().UTC()
		rep.Wire = wire.stop(stream)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stream, "tunnelbench-runner: copied %d bytes, %d rows in %.3f s: %.3f MB/s, %.0f rows/s\n",
			rep.Copy.Bytes, rep.Copy.Rows, rep.Copy.Seconds, rep.Copy.MBPerSecond, rep.Copy.RowsPerSecond)
		rep.SSH = r.negotiated()
		return rep
	}

	warmTPS, err := warmUp(ctx, opts, stream, run, r)
	if err != nil {
		return fail(err)
	}
	logs, err := newTransactionLogs(gen, cmp.Or(opts.TransactionLogDir, runspec.TransactionLogDir),
		samplingRate(run.Load, warmTPS, run.ExpectedTPS))
	if err != nil {
		return fail(err)
	}

	if run.Pods > 1 {
		// Every pod connected and warmed up: the measured loads start together.
		if err := opts.AwaitStart(ctx, wait, cmp.Or(opts.RetryEvery/10, 100*time.Millisecond)); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stream, "tunnelbench-runner: pod %d of %d starts its load with the others\n", opts.PodIndex, run.Pods)
	}
	counter, err := startCounting(ctx, run.Pooler, run.PoolerMetrics, run.PoolerPart, sess)
	if err != nil {
		return fail(err)
	}
	cpu := startCPU(ctx, opts.CgroupRoot, run.CPUParts)
	cpu.readThreadsWithin(ctx, run.Load.Duration)
	probed := startProbes(ctx, run.Probes)
	wire := startWire(opts.NetDev)
	rep.StartTime = time.Now().UTC()
	lv, stop := followLive(ctx, opts.Live, runspec.LiveLoad, run.Load, n)
	outcomes := runLoads(ctx, opts, stream, run.Load, n, "", logs, lv)
	stop()
	rep.EndTime = time.Now().UTC()
	rep.Executed = executed(outcomes)
	rep.Wire = wire.stop(stream)
	rep.CPU, rep.Sidecars, rep.Unmeasured = cpu.stop(ctx, stream)
	rep.Probes = probed.stop(ctx)

	var results []*engine.Result
	for i, o := range outcomes {
		if o.err != nil {
			return fail(r.explain(i, n, o.err))
		}
		results = append(results, o.result)
		if n > 1 {
			rep.Tunnels = append(rep.Tunnels, report.Tunnel{Index: i, TPS: o.result.TPS, LatencyAvgMs: o.result.LatencyAvgMs,
				Transactions: o.result.Transactions, Failed: o.result.FailedTransactions})
		}
	}
	rep.Result = engine.Aggregate(results)
	var await awaitWindow
	if run.Pods > 1 {
		await = func(ctx context.Context, covered latency.Span) (latency.Span, error) {
			return opts.AwaitWindow(ctx, covered, wait, cmp.Or(opts.RetryEvery/10, 100*time.Millisecond))
		}
	}
	if rep.Latency, rep.Window, err = logs.measure(ctx, n, await); err != nil {
		return fail(err)
	}
	rep.SSH = r.negotiated()
	if rep.Pooler, err = counter.stop(ctx); err != nil {
		return fail(err)
	}
	// The run's figures are in: a probe that fails costs only its own figure.
	if rep.Setup, err = measureSetup(ctx, sess.config); err != nil {
		fmt.Fprintf(stream, "tunnelbench-runner: the connection setup's phases are not known: %v\n", err)
	}
	if run.Storm > 0 {
		if rep.Storm, err = storm(ctx, opts, stream, sess.probe); err != nil {
			return fail(err)
		}
	}
	return rep
}

// warmUp runs the run's warm-up, when it has one, and returns its tps. Discarded: it fills the
// server's and the path's caches and opens the tunnels. Its errors are the path's, and fail the
// run as the measured load's would. Its tps sizes the transaction log's sampling.
func warmUp(ctx context.Context, opts Options, stream io.Writer, run runspec.Run, r tunnelLogs) (float64, error) {
	if run.Warmup <= 0 {
		return 0, nil
	}
	n := max(run.Tunnels, 1)
	warm := run.Load
	warm.Duration, warm.Transactions = run.Warmup, 0
	lv, stop := followLive(ctx, opts.Live, runspec.LiveWarmup, warm, n)
	warmed := runLoads(ctx, opts, stream, warm, n, "warm-up", nil, lv)
	stop()
	var tps float64
	for i, o := range warmed {
		if o.err != nil {
			return 0, r.explain(i, n, fmt.Errorf("during the warm-up: %w", o.err))
		}
		tps += o.result.TPS
	}
	return tps, nil
}

// initialize runs the generator's initialization of the data set, its processes one after the
// other.
func initialize(ctx context.Context, opts Options, stream io.Writer) error {
	gen := opts.Generator
	for _, args := range gen.InitArgs(opts.Run.Scale) {
		out, err := runProcess(ctx, opts, stream, nil, args, "")
		if err != nil {
			return &FailureError{Reason: conditions.ReasonPgbenchError,
				Message: fmt.Sprintf("%s failed (%v): %s", engine.CommandLine(gen.Name(), args), err, gen.LastError(out))}
		}
	}
	return nil
}

// initCommand is the data set's initialization, its processes "; " between them.
func initCommand(gen engine.Generator, scale int) string {
	var lines []string
	for _, args := range gen.InitArgs(scale) {
		lines = append(lines, engine.CommandLine(gen.Name(), args))
	}
	return strings.Join(lines, "; ")
}

// outcome is one load generator process's result.
type outcome struct {
	// command is the process as started: its added environment and its command line.
	command string
	result  *engine.Result
	output  string
	err     error
}

// executed is the processes' command lines as they started, "; " between them.
func executed(outcomes []outcome) string {
	lines := make([]string, len(outcomes))
	for i, o := range outcomes {
		lines[i] = o.command
	}
	return strings.Join(lines, "; ")
}

// runLoads runs the load as n load generator processes at the same moment, one per tunnel (tunnel i on
// port TunnelPort+i) with the clients and threads split evenly, and returns each one's outcome.
// phase, when set, prefixes their output lines ("warm-up"); logs, when set, has each process log
// its transactions; lv, when set, follows their progress.
func runLoads(ctx context.Context, opts Options, stream io.Writer, load runspec.Load, n int, phase string,
	logs *transactionLogs, lv *live) []outcome {
	outcomes := make([]outcome, n)
	ctx, stall, stopWatch := watchStall(ctx, load.StallTimeout, n)
	defer stopWatch()
	var wg sync.WaitGroup
	gen := opts.Generator
	for i, share := range engine.SplitLoad(load, n) {
		args := gen.LoadArgs(share)
		if logs != nil {
			args = append(args, gen.TransactionLogArgs(logs.prefix(i), logs.rate)...)
		}
		var env []string
		var tags []string
		if phase != "" {
			tags = append(tags, phase)
		}
		if n > 1 {
			portEnv, portArgs := gen.AtPort(opts.Run.TunnelPort + i)
			env, args = portEnv, append(args, portArgs...)
			tags = append(tags, fmt.Sprintf("tunnel %d", i))
		}
		prefix := ""
		if len(tags) > 0 {
			prefix = "[" + strings.Join(tags, ", ") + "] "
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tees []io.Writer
			if w := lv.writer(i, gen.ParseProgress); w != nil {
				tees = append(tees, w)
			}
			if w := stall.writer(i, gen.ParseProgress); w != nil {
				tees = append(tees, w)
			}
			out, runErr := runProcess(ctx, opts, stream, env, args, prefix, tees...)
			stall.exited(i)
			res, parseErr := gen.Parse(strings.NewReader(out))
			switch {
			case parseErr != nil && runErr != nil:
				parseErr = fmt.Errorf("%s failed (%w): %w", gen.Name(), runErr, parseErr)
			case parseErr == nil && runErr != nil:
				// A summary and a non-zero exit (pgbench's 2: errors during the run): the
				// generator counted errors it considers fatal, and its figures are partial. The
				// run fails with its error rather than report them.
				parseErr = fmt.Errorf("%s exited with %w: %s", gen.Name(), runErr, gen.LastError(out))
			}
			outcomes[i] = outcome{command: strings.Join(append(slices.Clone(env), engine.CommandLine(gen.Name(), args)), " "),
				result: res, output: out, err: parseErr}
		}()
	}
	wg.Wait()
	if f := stall.failure(phase, n); f != nil {
		// Every process was stopped: the stall is the cause of each one's error.
		for i := range outcomes {
			if outcomes[i].err != nil {
				outcomes[i].err = f
			}
		}
	}
	return outcomes
}

// StormBatches is how many batches a connection storm runs as, one after the other, each its own
// pgbench: their mean connect times give the storm's figure a distribution-free interval from one
// run (stats.MedianCI: the min–max of 6 covers the median with 97 %).
const StormBatches = 6

// stormSizes splits n connections into at most StormBatches batches, as even as they go.
func stormSizes(n int32) []int32 {
	batches := min(n, StormBatches)
	var out []int32
	for i := range batches {
		out = append(out, n/batches+boolInt(i < n%batches))
	}
	return out
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// storm opens the run's Storm connections one after the other, each to run one statement and
// close, in batches (StormBatches), and sums them up: the storm's figures are the whole storm's,
// its mean connect time weighted by each batch's connections. The generator opens them (pgbench
// -C) where it can; where it cannot (sysbench 1.0.20), the runner's own driver does (driverStorm).
func storm(ctx context.Context, opts Options, stream io.Writer, probe pathProbe) (*report.Storm, error) {
	gen := opts.Generator
	batch := func(size int32, prefix string) (*engine.Result, string, error) {
		args := gen.StormArgs(size)
		res, err := stormBatch(ctx, opts, stream, args, prefix)
		return res, engine.CommandLine(gen.Name(), args), err
	}
	if gen.StormArgs(1) == nil {
		batch = func(size int32, prefix string) (*engine.Result, string, error) {
			res, err := driverStorm(ctx, probe, size)
			if err == nil {
				fmt.Fprintf(stream, "%s%d connections in %.3f s, %.3f ms each to connect\n", prefix, res.Transactions,
					float64(res.Transactions)/res.TPS, res.ConnectionTimeMs)
			}
			return res, fmt.Sprintf("%s (the runner's driver: connect, %s, close; %d connections)", driverStormName,
				probeStatement, size), err
		}
	} else if err := writeFile(runspec.StormScriptPath, gen.StormScript()); err != nil {
		return nil, err
	}
	out := &report.Storm{}
	var seconds, connectSum float64
	for i, size := range stormSizes(opts.Run.Storm) {
		res, command, err := batch(size, fmt.Sprintf("[storm %d/%d] ", i+1, StormBatches))
		if err != nil {
			return nil, err
		}
		out.Command = fmt.Sprintf("%d × %s", len(out.BatchConnectMs)+1, command)
		out.Connections += res.Transactions
		out.Failed += res.FailedTransactions
		if res.TPS > 0 {
			seconds += float64(res.Transactions+res.FailedTransactions) / res.TPS
		}
		connectSum += res.ConnectionTimeMs * float64(res.Transactions)
		out.BatchConnectMs = append(out.BatchConnectMs, res.ConnectionTimeMs)
	}
	if seconds > 0 {
		out.PerSecond = float64(out.Connections+out.Failed) / seconds
	}
	if out.Connections > 0 {
		out.MeanConnectMs = connectSum / float64(out.Connections)
	}
	return out, nil
}

// stormBatch runs one batch of the storm.
func stormBatch(ctx context.Context, opts Options, stream io.Writer, args []string, prefix string) (*engine.Result, error) {
	out, runErr := runProcess(ctx, opts, stream, nil, args, prefix)
	res, err := opts.Generator.Parse(strings.NewReader(out))
	switch {
	case err != nil && runErr != nil:
		return nil, fmt.Errorf("the connection storm failed (%w): %w", runErr, err)
	case err != nil:
		return nil, fmt.Errorf("the connection storm: %w", err)
	case runErr != nil:
		return nil, fmt.Errorf("the connection storm: %s exited with %w: %s", opts.Generator.Name(), runErr,
			opts.Generator.LastError(out))
	}
	return res, nil
}

// writeScript writes the inline script from the environment, as the generator runs it, where its
// load's arguments expect it. Without it, the generator would fail on a missing file, or run a
// stale one.
func writeScript(gen engine.Generator) error {
	script, ok := os.LookupEnv(runspec.ScriptEnv)
	if !ok {
		return fmt.Errorf("the load runs an inline script, but %s is not set", runspec.ScriptEnv)
	}
	if c := scripts.ShellMetaCommand(script); c != "" {
		return &FailureError{Reason: conditions.ReasonInvalidSpec, Message: fmt.Sprintf(
			"the inline script uses pgbench's \\shell or \\setshell (%q), which would run a command next to the server's password: refused", c)}
	}
	path, content, err := gen.Script(script)
	if err != nil {
		return &FailureError{Reason: conditions.ReasonInvalidSpec, Message: fmt.Sprintf("the inline script: %v", err)}
	}
	return writeFile(path, content)
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot write the load's script: %w", err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("cannot write the load's script: %w", err)
	}
	return nil
}

// runProcess runs one load generator process with extra environment, streaming its output (each line prefixed, and
// to tees as it is) and returning all of it.
func runProcess(ctx context.Context, opts Options, stream io.Writer, env, args []string, prefix string,
	tees ...io.Writer) (string, error) {
	var output bytes.Buffer
	cmd := exec.CommandContext(ctx, opts.Generator.Program(), args...)
	cmd.Dir = opts.Generator.WorkDir()
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	// pgbench writes progress and errors to stderr: one writer for both keeps them in order.
	out := io.MultiWriter(append([]io.Writer{&prefixWriter{prefix: prefix, w: stream}, &output}, tees...)...)
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	return output.String(), err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
