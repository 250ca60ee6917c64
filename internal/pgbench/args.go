package pgbench

import (
	"math"
	"strconv"
	"strings"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// ScriptPath is where the runner writes an inline script before it starts pgbench.
const ScriptPath = "/tmp/tunnelbench/script.sql"

// RunArgs returns pgbench's arguments for one transport's run of the load. The connection comes
// from libpq environment variables, so no host, user or password appears here.
func RunArgs(load benchv1.LoadSpec) []string {
	var args []string
	if load.Script != "" {
		// A custom script needs no pgbench_* tables: skip the vacuum pgbench would try first.
		args = append(args, "-n", "-f", ScriptPath)
	} else {
		args = append(args, "-b", string(load.Builtin))
	}
	protocol := load.Protocol
	if protocol == "" {
		protocol = "simple"
	}
	args = append(args,
		"-M", string(protocol),
		"-c", strconv.Itoa(int(max(load.Clients, 1))),
		"-j", strconv.Itoa(int(max(load.Threads, 1))),
	)
	switch {
	case load.Transactions != nil:
		args = append(args, "-t", strconv.Itoa(int(*load.Transactions)))
	case load.Duration != nil:
		args = append(args, "-T", seconds(load.Duration.Duration))
	default:
		args = append(args, "-T", seconds(benchv1.DefaultDuration))
	}
	if load.Reconnect {
		args = append(args, "-C")
	}
	progress := 5 * time.Second
	if load.ProgressInterval != nil {
		progress = load.ProgressInterval.Duration
	}
	// -P also makes pgbench report the latency stddev in its summary.
	args = append(args, "-P", seconds(progress))
	return args
}

// InitArgs returns the arguments of `pgbench -i` for the load's scale.
func InitArgs(load benchv1.LoadSpec) []string {
	return []string{"-i", "-s", strconv.Itoa(int(max(load.Scale, 1)))}
}

// seconds renders a duration as whole seconds, rounded up and at least 1: pgbench takes integers.
func seconds(d time.Duration) string {
	return strconv.Itoa(int(max(1, math.Ceil(d.Seconds()))))
}

// CommandLine renders a command as a shell would read it, for status and logs.
func CommandLine(name string, args []string) string {
	parts := make([]string, 0, len(args)+1)
	parts = append(parts, name)
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		safe := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@", r)
		return !safe
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// StormScriptPath is where the runner writes the connection storm's script.
const StormScriptPath = "/tmp/tunnelbench/storm.sql"

// StormScript is what each connection of a storm runs before it disconnects.
const StormScript = "select 1;\n"

// StormArgs returns the arguments of a connection storm: n connections opened one after the other
// by a single client, each running StormScript once (-C reconnects for every transaction). pgbench
// then reports the average connection time and the rate of whole cycles.
func StormArgs(n int32) []string {
	return []string{"-n", "-C", "-M", "simple", "-c", "1", "-j", "1", "-t", strconv.Itoa(int(n)), "-f", StormScriptPath}
}
