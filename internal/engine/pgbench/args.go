package pgbench

import (
	"math"
	"strconv"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// LoadArgs returns pgbench's arguments for a load; a zero field leaves pgbench's default. The
// connection comes from libpq environment variables, so no host, user or password appears here.
func LoadArgs(load runspec.Load) []string {
	var args []string
	switch {
	case load.Script:
		// A custom script needs no pgbench_* tables: skip the vacuum pgbench would try first.
		args = append(args, "-n", "-f", runspec.ScriptPath)
	case load.Builtin != "":
		args = append(args, "-b", load.Builtin)
	}
	if load.Protocol != "" {
		args = append(args, "-M", load.Protocol)
	}
	if load.Clients > 0 {
		args = append(args, "-c", strconv.Itoa(load.Clients))
	}
	if load.Threads > 0 {
		args = append(args, "-j", strconv.Itoa(load.Threads))
	}
	switch {
	case load.Transactions > 0:
		args = append(args, "-t", strconv.Itoa(load.Transactions))
	case load.Duration > 0:
		args = append(args, "-T", seconds(load.Duration))
	}
	if load.Reconnect {
		args = append(args, "-C")
	}
	if load.Rate > 0 {
		args = append(args, "-R", strconv.FormatFloat(load.Rate, 'f', -1, 64))
	}
	if load.LatencyLimit > 0 {
		// pgbench takes milliseconds, with a fraction.
		args = append(args, "-L", strconv.FormatFloat(float64(load.LatencyLimit)/float64(time.Millisecond), 'f', -1, 64))
	}
	if load.ProgressInterval > 0 {
		// -P also makes pgbench report the latency stddev in its summary.
		args = append(args, "-P", seconds(load.ProgressInterval))
	}
	// pgbench's own word for failed transactions (serialization or deadlock), in its summary and
	// its transaction log; pgbench 15 and later.
	return append(args, "--failures-detailed")
}

// InitArgs returns the arguments of `pgbench -i` at a scale; zero leaves pgbench's default.
func InitArgs(scale int) []string {
	if scale <= 0 {
		return []string{"-i"}
	}
	return []string{"-i", "-s", strconv.Itoa(scale)}
}

// seconds renders a duration as whole seconds, rounded up and at least 1: pgbench takes integers.
func seconds(d time.Duration) string {
	return strconv.Itoa(int(max(1, math.Ceil(d.Seconds()))))
}

// StormScript is what each connection of a storm runs before it disconnects.
const StormScript = "select 1;\n"

// StormArgs returns the arguments of a connection storm: n connections opened one after the other
// by a single client, each running StormScript once (-C reconnects for every transaction). pgbench
// then reports the average connection time and the rate of whole cycles.
func StormArgs(n int32) []string {
	return []string{"-n", "-C", "-M", "simple", "-c", "1", "-j", "1", "-t", strconv.Itoa(int(n)), "-f", runspec.StormScriptPath}
}
