package pgbench

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
)

// Generator is pgbench as the runner drives it: the PostgreSQL engine's load generator. The
// connection comes from libpq's environment, which the transport fills in.
type Generator struct {
	// Path is the pgbench executable; empty means "pgbench" on the PATH.
	Path string
}

var _ engine.Generator = Generator{}

// Program is the executable.
func (g Generator) Program() string {
	if g.Path == "" {
		return "pgbench"
	}
	return g.Path
}

// Prepare does nothing: libpq reads the connection from the environment, and pgbench reads the
// data set's scale from its tables.
func (Generator) Prepare(engine.Connection, int) error { return nil }

// WorkDir is the runner's own: libpq's files come by path.
func (Generator) WorkDir() string { return "" }

// Name is "pgbench".
func (Generator) Name() string { return "pgbench" }

// Version is what `pgbench --version` prints ("pgbench (PostgreSQL) 15.10").
func (g Generator) Version(ctx context.Context) string {
	return engine.ProgramVersion(ctx, g.Program())
}

// Script is the script as it is, at runspec.ScriptPath (-f).
func (Generator) Script(text string) (path, content string, err error) {
	return runspec.ScriptPath, text, nil
}

// LoadArgs are LoadArgs.
func (Generator) LoadArgs(load runspec.Load) []string { return LoadArgs(load) }

// AtPort sets libpq's port.
func (Generator) AtPort(port int) (env, args []string) {
	return []string{fmt.Sprintf("PGPORT=%d", port)}, nil
}

// TransactionLogArgs are pgbench's -l flags (pgbench adds .pid and, for threads after the first,
// .thread to the prefix).
func (Generator) TransactionLogArgs(prefix string, rate float64) []string {
	args := []string{"-l", "--log-prefix=" + prefix}
	if rate < 1 {
		args = append(args, "--sampling-rate="+strconv.FormatFloat(rate, 'g', -1, 64))
	}
	return args
}

// InitArgs are InitArgs, one process.
func (Generator) InitArgs(scale int) [][]string { return [][]string{InitArgs(scale)} }

// StormScript is StormScript.
func (Generator) StormScript() string { return StormScript }

// StormArgs are StormArgs.
func (Generator) StormArgs(n int32) []string { return StormArgs(n) }

// Parse is Parse.
func (Generator) Parse(r io.Reader) (*engine.Result, error) { return Parse(r) }

// ParseProgress is ParseProgress.
func (Generator) ParseProgress(line string) (engine.ProgressPoint, bool) { return ParseProgress(line) }

// LastError is LastError.
func (Generator) LastError(output string) string { return LastError(output) }

// ConnectionLost is ConnectionLost.
func (Generator) ConnectionLost(message string) bool { return ConnectionLost(message) }
