package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/report"
)

// ScriptEnv is the environment variable that carries an inline pgbench script to the runner.
const ScriptEnv = "TUNNELBENCH_SCRIPT"

// Options configure one run.
type Options struct {
	// Pgbench is the pgbench executable.
	Pgbench string
	// Args are pgbench's arguments.
	Args []string
	// Init marks a `pgbench -i` run: success is its exit status, and there is no summary to parse.
	Init bool
	// WaitTimeout bounds the wait for the server to accept a connection.
	WaitTimeout time.Duration
	// RetryEvery is the pause between connection attempts while waiting.
	RetryEvery time.Duration
	// TerminationLog receives the encoded report; empty to skip.
	TerminationLog string
	// Stdout and Stderr receive pgbench's output as it runs.
	Stdout, Stderr io.Writer
	// Tunnels > 1 runs one pgbench per SSH tunnel at the same moment, tunnel i on loopback port
	// TunnelPort+i, with clients and threads split evenly, and aggregates their results.
	Tunnels    int
	TunnelPort int
	// SSHLogDir holds the tunnels' ssh -v logs (tunnel-<i>.log): what they negotiated and why one
	// died.
	SSHLogDir string
	// Pooler is set when the connection goes through a pooler: PoolerPgBouncer for one whose admin
	// console the runner's user may read (the operator's own PgBouncer), PoolerOpaque otherwise.
	Pooler string
	// Storm, when positive, runs a connection storm of that many connections after the load.
	Storm int32
	// PoolerMetrics, for an opaque pooler, is host:port of its pods' metrics exporters (a
	// headless Service), read instead of the admin console.
	PoolerMetrics string
}

// Kinds of pooler, for Options.Pooler.
const (
	PoolerPgBouncer = "pgbouncer"
	PoolerOpaque    = "opaque"
)

// Run runs pgbench once and returns its report. The report is also written to the termination log,
// whatever the outcome; the returned error is non-nil when the run failed.
func Run(ctx context.Context, opts Options) (*report.Report, error) {
	rep := execute(ctx, opts)
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
	r := tunnelLogs{dir: opts.SSHLogDir, count: max(opts.Tunnels, 1)}
	// Parallel pgbench processes share the container's output.
	stream := &lockedWriter{w: orDiscard(opts.Stdout)}
	rep := &report.Report{Command: pgbench.CommandLine("pgbench", opts.Args)}
	fail := func(err error) *report.Report {
		var fe *FailureError
		if !errors.As(err, &fe) {
			fe = &FailureError{Reason: benchv1.ReasonPgbenchError, Message: err.Error()}
		}
		rep.Failure = &report.Failure{Reason: fe.Reason, Message: fe.Message}
		return rep
	}
	if err := writeScript(); err != nil {
		return fail(err)
	}
	wait, retry := opts.WaitTimeout, opts.RetryEvery
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	if retry <= 0 {
		retry = time.Second
	}
	sess, err := preflight(ctx, wait, retry)
	if err != nil {
		var fe *FailureError
		if errors.As(err, &fe) && fe.Reason == benchv1.ReasonServerUnreachable {
			// Through a tunnel, "unreachable" is usually the tunnel: say what ssh said.
			return fail(r.explain(0, 1, err))
		}
		return fail(err)
	}
	rep.TLS, rep.ServerVersion = sess.serverTLS, sess.serverVersion

	if opts.Init {
		rep.StartTime = time.Now().UTC()
		out, runErr := runProcess(ctx, opts, stream, nil, opts.Args, "")
		rep.EndTime = time.Now().UTC()
		if runErr != nil {
			return fail(&FailureError{Reason: benchv1.ReasonPgbenchError,
				Message: fmt.Sprintf("pgbench -i failed (%v): %s", runErr, pgbench.LastError(out))})
		}
		return rep
	}

	counter, err := startCounting(ctx, opts.Pooler, opts.PoolerMetrics, sess)
	if err != nil {
		return fail(err)
	}
	n := max(opts.Tunnels, 1)
	type outcome struct {
		result *pgbench.Result
		output string
		err    error
	}
	outcomes := make([]outcome, n)
	var wg sync.WaitGroup
	rep.StartTime = time.Now().UTC()
	for i, args := range splitArgs(opts.Args, n) {
		var env []string
		prefix := ""
		if n > 1 {
			env = []string{fmt.Sprintf("PGPORT=%d", opts.TunnelPort+i)}
			prefix = fmt.Sprintf("[tunnel %d] ", i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, runErr := runProcess(ctx, opts, stream, env, args, prefix)
			res, parseErr := pgbench.Parse(strings.NewReader(out))
			switch {
			case parseErr != nil && runErr != nil:
				parseErr = fmt.Errorf("pgbench failed (%w): %w", runErr, parseErr)
			case parseErr == nil && runErr != nil:
				// A summary and a non-zero exit: pgbench counted errors it considers fatal.
				parseErr = fmt.Errorf("pgbench exited with %w: %s", runErr, pgbench.LastError(out))
			}
			outcomes[i] = outcome{result: res, output: out, err: parseErr}
		}()
	}
	wg.Wait()
	rep.EndTime = time.Now().UTC()

	var results []*pgbench.Result
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
	rep.Result = pgbench.Aggregate(results)
	rep.SSH = r.negotiated()
	if rep.Pooler, err = counter.stop(ctx); err != nil {
		return fail(err)
	}
	if opts.Storm > 0 {
		if rep.Storm, err = storm(ctx, opts, stream); err != nil {
			return fail(err)
		}
	}
	return rep
}

// storm runs the connection storm: one client connecting, running select 1 and disconnecting, as
// many times as asked, through the same connection settings as the load.
func storm(ctx context.Context, opts Options, stream io.Writer) (*report.Storm, error) {
	if err := writeFile(pgbench.StormScriptPath, pgbench.StormScript); err != nil {
		return nil, err
	}
	args := pgbench.StormArgs(opts.Storm)
	out, runErr := runProcess(ctx, opts, stream, nil, args, "[storm] ")
	res, err := pgbench.Parse(strings.NewReader(out))
	switch {
	case err != nil && runErr != nil:
		return nil, fmt.Errorf("the connection storm failed (%w): %w", runErr, err)
	case err != nil:
		return nil, fmt.Errorf("the connection storm: %w", err)
	case runErr != nil:
		return nil, fmt.Errorf("the connection storm: pgbench exited with %w: %s", runErr, pgbench.LastError(out))
	}
	return &report.Storm{Connections: res.Transactions, Failed: res.FailedTransactions, PerSecond: res.TPS,
		MeanConnectMs: res.ConnectionTimeMs, Command: pgbench.CommandLine("pgbench", args)}, nil
}

// writeScript writes an inline script from the environment where pgbench's -f expects it.
func writeScript() error {
	script, ok := os.LookupEnv(ScriptEnv)
	if !ok {
		return nil
	}
	return writeFile(pgbench.ScriptPath, script)
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot write the pgbench script: %w", err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("cannot write the pgbench script: %w", err)
	}
	return nil
}

// runProcess runs one pgbench with extra environment, streaming its output (each line prefixed) and
// returning all of it.
func runProcess(ctx context.Context, opts Options, stream io.Writer, env, args []string, prefix string) (string, error) {
	var output bytes.Buffer
	cmd := exec.CommandContext(ctx, opts.Pgbench, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	// pgbench writes progress and errors to stderr: one writer for both keeps them in order.
	out := io.MultiWriter(&prefixWriter{prefix: prefix, w: stream}, &output)
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	return output.String(), err
}

// splitArgs returns the arguments of n parallel pgbench processes: -c and -j divided evenly.
func splitArgs(args []string, n int) [][]string {
	if n <= 1 {
		return [][]string{args}
	}
	clients, threads := 1, 1
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-c":
			clients, _ = strconv.Atoi(args[i+1])
		case "-j":
			threads, _ = strconv.Atoi(args[i+1])
		}
	}
	var out [][]string
	for _, share := range pgbench.Split(clients, threads, n) {
		a := append([]string(nil), args...)
		for i := 0; i+1 < len(a); i++ {
			switch a[i] {
			case "-c":
				a[i+1] = strconv.Itoa(share.Clients)
			case "-j":
				a[i+1] = strconv.Itoa(share.Threads)
			}
		}
		out = append(out, a)
	}
	return out
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
