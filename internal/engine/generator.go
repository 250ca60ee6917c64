package engine

import (
	"context"
	"io"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// Generator is an engine's load generator, as the runner drives it: the command lines of a load,
// of the data set's initialization and of a connection storm, and the reading of what the process
// printed. The connection itself (server, credentials, TLS) is the transport's, in the
// environment the runner starts the process with.
type Generator interface {
	// Program is the executable the runner starts.
	Program() string
	// Name is how command lines name the program in reports ("pgbench").
	Name() string
	// WorkDir is the folder the program runs in; empty for the runner's own.
	WorkDir() string
	// Version is what the program says its version is, for the result's provenance; empty when
	// it cannot tell.
	Version(ctx context.Context) string
	// Script is the file a load's inline script becomes, as LoadArgs expect it: its path and its
	// content, or why the generator cannot run it.
	Script(text string) (path, content string, err error)
	// Prepare readies what the program reads beside its arguments, before the first process: the
	// connection in its own form, the data set's size at scale.
	Prepare(conn Connection, scale int) error
	// LoadArgs are the arguments of one process's share of a load.
	LoadArgs(load runspec.Load) []string
	// AtPort is what a process adds (environment, arguments) to reach the server at another local
	// port than the connection's own: tunnel i of several listens on its own port.
	AtPort(port int) (env, args []string)
	// TransactionLogArgs make a process log each transaction to files that start with prefix,
	// a random sample of them at rate (1: all), in the form latency.Recorder.ReadLog reads; nil
	// when the program logs no transaction (the run then has no latency distribution).
	TransactionLogArgs(prefix string, rate float64) []string
	// InitArgs are the processes, one after the other, that create the built-in load's data set
	// at a scale.
	InitArgs(scale int) [][]string
	// StormScript is what each connection of a storm runs before it disconnects, written to
	// runspec.StormScriptPath.
	StormScript() string
	// StormArgs are the arguments of a storm of n connections opened one after the other.
	StormArgs(n int32) []string
	// Parse reads the process's combined output into its Result, or says why the run failed.
	Parse(r io.Reader) (*Result, error)
	// ParseProgress reads one line of output as a progress report, as it comes.
	ParseProgress(line string) (ProgressPoint, bool)
	// LastError is the most meaningful error line of an output, or "".
	LastError(output string) string
	// ConnectionLost reports whether an error says the connection to the server was lost under
	// the load (the server restarted, a part of the path closed it).
	ConnectionLost(message string) bool
}
