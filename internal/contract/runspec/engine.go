package runspec

import (
	"fmt"
	"slices"
)

// The engines a run can load (Run.Engine).
const (
	EnginePostgreSQL = "postgresql"
	EngineMySQL      = "mysql"
)

// SysbenchBuiltins are the built-in tests a MySQL load may name (--builtin): sysbench's OLTP
// scripts, which share the sbtest table its prepare creates. Any other name would be a Lua file
// for sysbench to run.
var SysbenchBuiltins = []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only",
	"oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete", "select_random_points",
	"select_random_ranges"}

// engineProblems lists what the run's engine cannot do as asked. MySQL's generator, sysbench
// 1.0.20, cannot reconnect per transaction nor count late transactions, logs no transaction (so
// neither several pods' common window nor a latency distribution), and the runner's copy and
// PgBouncer's console speak PostgreSQL (its measure of the link, its storm and the MySQL pooler's
// counters serve both).
func (r Run) engineProblems() []string {
	switch r.Engine {
	case "", EnginePostgreSQL:
		if r.Pooler == PoolerMySQL {
			return []string{fmt.Sprintf("--pooler=%s is MySQL's pooler, not PostgreSQL's", PoolerMySQL)}
		}
		return nil
	case EngineMySQL:
	default:
		return []string{fmt.Sprintf("--engine must be %s or %s, not %q", EnginePostgreSQL, EngineMySQL, r.Engine)}
	}
	var errs []string
	refuse := func(set bool, what string) {
		if set {
			errs = append(errs, fmt.Sprintf("--engine=%s cannot %s", EngineMySQL, what))
		}
	}
	refuse(r.Load.Builtin != "" && !slices.Contains(SysbenchBuiltins, r.Load.Builtin),
		fmt.Sprintf("run --builtin=%q: sysbench's built-in tests are %v", r.Load.Builtin, SysbenchBuiltins))
	refuse(r.Load.Protocol == "extended", "run --protocol=extended: sysbench has the simple and the prepared protocols")
	refuse(r.Load.Reconnect, "reconnect per transaction (--reconnect): sysbench 1.0.20 keeps one connection per thread")
	refuse(r.Load.LatencyLimit > 0, "count late transactions (--latency-limit): sysbench has no latency limit")
	refuse(r.Copy.Set(), "copy a data set (--copy-bytes): COPY is PostgreSQL's")
	refuse(r.Pooler != "" && r.Pooler != PoolerMySQL,
		fmt.Sprintf("go through --pooler=%s: PostgreSQL's; MySQL's is %s", r.Pooler, PoolerMySQL))
	refuse(r.Pods > 1, "share a load between pods (--pods): sysbench logs no transaction to find their common window by")
	return errs
}
