// Package runnerbin builds the tunnelbench-runner binary for the benchmark programs and runs it as
// a Job's pod does: `run` with the flags of a runspec.Run, the connection in libpq's environment,
// the report read back from its termination log.
package runnerbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// Runner is a built runner binary and its scratch folder.
type Runner struct {
	Bin, Work string
}

// Build compiles ./cmd/runner into work (run from the module's root, as make bench does).
func Build(work string) (*Runner, error) {
	bin := filepath.Join(work, "tunnelbench-runner")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/runner").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cannot build the runner: %w: %s", err, out)
	}
	return &Runner{Bin: bin, Work: work}, nil
}

// Run runs one run with the environment env (KEY=value, added to this process's) and returns its
// report, which must hold a result.
func (r *Runner) Run(env []string, run runspec.Run) (*report.Report, error) {
	return r.RunWith(env, run)
}

// RunWith is Run with the runner's own flags (where things are in its container: --cgroup,
// --netdev) before the run's.
func (r *Runner) RunWith(env []string, run runspec.Run, own ...string) (*report.Report, error) {
	termLog := filepath.Join(r.Work, "termination-log")
	args := append(append([]string{"run", "--termination-log", termLog}, own...), run.Args()...)
	cmd := exec.Command(r.Bin, args...)
	cmd.Env = append(append(os.Environ(), "HOME="+r.Work), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	msg, err := os.ReadFile(termLog)
	if err != nil {
		return nil, err
	}
	rep, err := report.Decode(string(msg))
	if err != nil {
		return nil, fmt.Errorf("no result: %w: %s", err, msg)
	}
	if rep.Result == nil {
		return nil, fmt.Errorf("the runner reported no result: %s", msg)
	}
	return rep, nil
}

// Env renders libpq settings as KEY=value.
func Env(settings map[string]string) []string {
	out := make([]string, 0, len(settings))
	for k, v := range settings {
		out = append(out, k+"="+v)
	}
	return out
}

// Bench is what the pgbench benchmark programs share: a scratch folder with the runner built in
// it, and a local PostgreSQL with pgbench's tables at scale 10.
type Bench struct {
	*Runner
	Server *pgtest.Server
}

// Start builds the runner and starts and initializes the server; Stop undoes both.
func Start(name string) (*Bench, error) {
	work, err := os.MkdirTemp("", "tunnelbench-"+name+"-")
	if err != nil {
		return nil, err
	}
	b := &Bench{}
	if b.Runner, err = Build(work); err != nil {
		_ = os.RemoveAll(work)
		return nil, err
	}
	if b.Server, err = pgtest.StartTemp(pgtest.Options{}); err != nil {
		_ = os.RemoveAll(work)
		return nil, err
	}
	initdb := exec.Command("pgbench", "-i", "-s", "10", "-q")
	initdb.Env = append(os.Environ(), Env(b.Server.Env("disable"))...)
	if out, err := initdb.CombinedOutput(); err != nil {
		b.Stop()
		return nil, fmt.Errorf("pgbench -i: %w: %s", err, out)
	}
	return b, nil
}

// Stop stops the server and removes the scratch folder.
func (b *Bench) Stop() {
	b.Server.Stop()
	_ = os.RemoveAll(b.Work)
}
