package sysbench

import (
	"math"
	"strconv"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// PreparedTest is the built-in test whose prepare and cleanup commands create and drop the data
// set every other built-in test reads (oltp_common.lua, which they all share).
const PreparedTest = "oltp_read_write"

// RowsPerScale is the rows of the sbtest table at scale 1: pgbench's 100,000 accounts, so that a
// scale means the same table size on both engines.
const RowsPerScale = 100_000

// LoadArgs returns sysbench's arguments for one process's share of a load, after the options
// file (connection, table size) that comes first: a later option overrides it. A zero field
// leaves sysbench's default.
func LoadArgs(load runspec.Load, optionsFile string) []string {
	test := load.Builtin
	if load.Script {
		test = ScriptPath
	}
	args := []string{test, "--config-file=" + optionsFile}
	switch load.Protocol {
	case "simple":
		// Text protocol: each statement is sent whole, as pgbench's simple protocol sends it.
		args = append(args, "--db-ps-mode=disable")
	case "prepared":
		args = append(args, "--db-ps-mode=auto")
	}
	args = append(args, "--threads="+strconv.Itoa(max(load.Clients, 1)))
	switch {
	case load.Transactions > 0:
		// sysbench counts the whole run's events; the load counts each client's.
		args = append(args, "--events="+strconv.Itoa(load.Transactions*max(load.Clients, 1)), "--time=0")
	case load.Duration > 0:
		args = append(args, "--time="+seconds(load.Duration))
	}
	if load.Rate > 0 {
		// sysbench takes whole transactions per second.
		args = append(args, "--rate="+strconv.Itoa(int(math.Max(1, math.Round(load.Rate)))))
	}
	if load.ProgressInterval > 0 {
		args = append(args, "--report-interval="+seconds(load.ProgressInterval))
	}
	return append(args, "run")
}

// InitArgs returns the two commands that make the data set the options file sizes: the cleanup
// of an earlier one (sysbench's prepare fails on a table that exists) and the prepare.
func InitArgs(optionsFile string) [][]string {
	return [][]string{
		{PreparedTest, "--config-file=" + optionsFile, "cleanup"},
		{PreparedTest, "--config-file=" + optionsFile, "prepare"},
	}
}

// TableSize is the sbtest table's rows at a scale (0: scale 1).
func TableSize(scale int) int {
	return max(scale, 1) * RowsPerScale
}

// seconds renders a duration as whole seconds, rounded up and at least 1: sysbench takes integers.
func seconds(d time.Duration) string {
	return strconv.Itoa(int(max(1, math.Ceil(d.Seconds()))))
}
