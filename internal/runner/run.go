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
}

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
	tlsInfo, err := preflight(ctx, wait, retry)
	if err != nil {
		return fail(err)
	}
	rep.TLS = tlsInfo

	var output bytes.Buffer
	cmd := exec.CommandContext(ctx, opts.Pgbench, opts.Args...)
	cmd.Stdout = io.MultiWriter(orDiscard(opts.Stdout), &output)
	// pgbench writes progress and errors to stderr: keep both streams in one buffer, in order.
	cmd.Stderr = io.MultiWriter(orDiscard(opts.Stderr), &output)
	rep.StartTime = time.Now().UTC()
	runErr := cmd.Run()
	rep.EndTime = time.Now().UTC()

	if opts.Init {
		if runErr != nil {
			return fail(&FailureError{Reason: benchv1.ReasonPgbenchError,
				Message: fmt.Sprintf("pgbench -i failed (%v): %s", runErr, pgbench.LastError(output.String()))})
		}
		return rep
	}
	result, parseErr := pgbench.Parse(&output)
	if parseErr != nil {
		msg := parseErr.Error()
		if runErr != nil {
			msg = fmt.Sprintf("pgbench failed (%v): %s", runErr, msg)
		}
		return fail(&FailureError{Reason: benchv1.ReasonPgbenchError, Message: msg})
	}
	if runErr != nil {
		// A summary and a non-zero exit: pgbench counted errors it considers fatal.
		return fail(&FailureError{Reason: benchv1.ReasonPgbenchError,
			Message: fmt.Sprintf("pgbench exited with %v: %s", runErr, pgbench.LastError(output.String()))})
	}
	rep.Result = result
	return rep
}

// writeScript writes an inline script from the environment where pgbench's -f expects it.
func writeScript() error {
	script, ok := os.LookupEnv(ScriptEnv)
	if !ok {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(pgbench.ScriptPath), 0o755); err != nil {
		return fmt.Errorf("cannot write the pgbench script: %w", err)
	}
	if err := os.WriteFile(pgbench.ScriptPath, []byte(script), 0o644); err != nil {
		return fmt.Errorf("cannot write the pgbench script: %w", err)
	}
	return nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
