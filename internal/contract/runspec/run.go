package runspec

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// PoolerKind says what kind of pooler, if any, stands between pgbench and the server: it decides
// how the runner collects the evidence that the load went through it.
type PoolerKind string

// Kinds of pooler; the empty kind is no pooler. The constants are untyped so that the plain string
// fields that carry them through the transports (transport.Connection.PoolerKind) take them too.
const (
	// PoolerPgBouncer is a PgBouncer whose admin console the runner's user may read: the
	// operator's own.
	PoolerPgBouncer = "pgbouncer"
	// PoolerOpaque is a pooler whose admin console the runner cannot read (CloudNativePG's): its
	// metrics exporters, when known, are read instead.
	PoolerOpaque = "opaque"
	// PoolerMySQL is TunnelBench's MySQL pooler (mysqlpool), whose counters are served at
	// --pooler-metrics, on the runner pod's loopback.
	PoolerMySQL = "mysqlpool"
)

// MaxStorm bounds Run.Storm, as the API bounds spec.load.connectionStorm.connections.
const MaxStorm = 100_000

// Load is the pgbench workload of a run, in pgbench's own terms. A zero field is left to pgbench's
// default; the operator fills every field it means (specs.LoadFor applies the API's defaults).
type Load struct {
	// Builtin is one of pgbench's builtin scripts (-b). Exactly one of Builtin and Script is set.
	Builtin string
	// Script runs the inline script the pod receives in the ScriptEnv variable (-f): the text can
	// be long and has no place among the flags.
	Script bool
	// Protocol is the query protocol (-M): simple, extended or prepared.
	Protocol string
	// Clients and Threads are pgbench's -c and -j, for the whole run: the runner splits them
	// across SSH tunnels.
	Clients int
	Threads int
	// Duration (-T) or Transactions per client (-t): exactly one is set.
	Duration     time.Duration
	Transactions int
	// Reconnect opens a connection per transaction (-C).
	Reconnect bool
	// ProgressInterval is the period of pgbench's progress reports (-P).
	ProgressInterval time.Duration
	// StallTimeout fails the run when no progress report shows a completed transaction for this
	// long; 0 never does.
	StallTimeout time.Duration
	// Rate, when positive, runs the load open-loop at this many transactions per second (-R).
	Rate float64
	// LatencyLimit, when positive, counts transactions longer than it as late, and with Rate
	// skips those already this far behind their schedule (-L).
	LatencyLimit time.Duration
}

// Run is everything the operator tells the runner about one run: what to run, how long to wait for
// the server, and what the connection goes through (tunnels, a pooler), which decides how the
// runner runs pgbench and what evidence it collects. The connection itself is not here: it comes
// from libpq's environment, which keeps the password out of the arguments.
type Run struct {
	// Engine is the server's engine, which decides the load generator: EnginePostgreSQL (empty
	// too: pgbench) or EngineMySQL (sysbench).
	Engine string
	// Init runs `pgbench -i` at Scale instead of a load: success is its exit status, and there is
	// no summary to parse. A MySQL load is told the Scale too: sysbench picks its rows by the
	// table's size rather than reading it.
	Init  bool
	Scale int
	// WaitTimeout bounds the wait for the server to accept a connection; zero leaves it to the
	// runner.
	WaitTimeout time.Duration
	// Load is the workload of a run that is not Init.
	Load Load
	// Storm, when positive, runs a connection storm of that many connections after the load.
	Storm int32
	// Warmup, when positive, runs the load for this long before the measured run, through the
	// same path, and discards its figures.
	Warmup time.Duration
	// ExpectedTPS is the highest tps the path measured in the benchmark's earlier runs, 0 before
	// its first: the transaction log's sampling is sized by it when there is no warm-up.
	ExpectedTPS float64
	// Tunnels is the number of SSH tunnels, at least 1 (1 without SSH). With more than one, the
	// runner runs one pgbench per tunnel at the same moment, tunnel i on loopback port
	// TunnelPort+i, with clients and threads split evenly, and aggregates their results.
	Tunnels    int
	TunnelPort int
	// SSHLogDir holds the tunnels' ssh -v logs (TunnelLogFile): what they negotiated and why one
	// died.
	SSHLogDir string
	// Pooler is the kind of pooler the connection goes through, empty for none.
	Pooler PoolerKind
	// PoolerMetrics, for an opaque pooler, is host:port of its pods' metrics exporters (a headless
	// Service), read instead of the admin console.
	PoolerMetrics string
	// PoolerPart is the pooler's part of the path in the run's cost (the sidecar's container, or
	// the shared PgBouncer's part): where the time clients waited in it for a server connection
	// goes in the round trip's budget.
	PoolerPart string
	// ResultConfigMap is the ConfigMap, in the pod's namespace, where the runner stores its whole
	// report (ResultKey): the termination message holds only 4 KiB. Empty: the termination
	// message alone.
	ResultConfigMap string
	// Copy, when set, replaces the pgbench load: the measured run copies the data set once; with
	// Init, the initialization creates it instead of pgbench's tables.
	Copy Copy
	// Link, when emulated, is the link the path crosses: the runner measures the path (RTT,
	// connection time and, with a bandwidth, a COPY) before the load, to report the link as it was.
	Link Link
	// AwaitLink makes the runner wait, before anything else, until the operator writes
	// LinkInjectedKey = LinkInjected into ResultConfigMap: an emulator acting on the pod from
	// outside (chaos-mesh) can only be set up once the pod runs, and a run that started before it
	// would measure the LAN.
	AwaitLink bool
	// CPUParts are the sidecars (tunnels, the link proxy, a sidecar pooler) whose containers'
	// CPU the runner samples at the ends of the measured window, each from the sidecar's loopback
	// port; the runner's own container is always sampled.
	CPUParts []CPUPart
	// Probes are the texts the transport reads its evidence from (a tunnel's counters, a proxy's
	// statistics), read by the runner at both ends of the measured load.
	Probes []Probe
	// Pods is how many runner pods share the load (an Indexed Job; 0 and 1: one). Pod i
	// (PodIndexEnv) runs share i of the load's clients and threads, marks itself ready after its
	// warm-up and starts its measured load at the operator's StartKey; it keeps its report under
	// ReportKey(Pods, i). Only pod 0 runs the connection storm.
	Pods int
}

// Args renders the run as the flags of `tunnelbench-runner run` (the subcommand itself not
// included). A flag whose value is the zero value is left out, which BindFlags reads back as that
// same zero value; --tunnels, which has no valid zero value, is always there.
func (r Run) Args() []string {
	var a args
	a.addString("engine", r.Engine)
	a.addBool("init", r.Init)
	a.addInt("scale", r.Scale)
	a.addDuration("wait-timeout", r.WaitTimeout)
	a.addString("builtin", r.Load.Builtin)
	a.addBool("script", r.Load.Script)
	a.addString("protocol", r.Load.Protocol)
	a.addInt("clients", r.Load.Clients)
	a.addInt("threads", r.Load.Threads)
	a.addDuration("duration", r.Load.Duration)
	a.addInt("transactions", r.Load.Transactions)
	a.addBool("reconnect", r.Load.Reconnect)
	a.addDuration("progress-interval", r.Load.ProgressInterval)
	a.addDuration("stall-timeout", r.Load.StallTimeout)
	a.addFloat("rate", r.Load.Rate)
	a.addDuration("latency-limit", r.Load.LatencyLimit)
	a.addInt("storm", int(r.Storm))
	a.addDuration("warmup", r.Warmup)
	a.addFloat("expected-tps", math.Ceil(r.ExpectedTPS))
	a = append(a, "--tunnels="+strconv.Itoa(r.Tunnels))
	a.addInt("tunnel-port", r.TunnelPort)
	a.addString("ssh-log-dir", r.SSHLogDir)
	a.addString("pooler", string(r.Pooler))
	a.addString("pooler-metrics", r.PoolerMetrics)
	a.addString("pooler-part", r.PoolerPart)
	a.addString("result-configmap", r.ResultConfigMap)
	r.Link.addArgs(&a, "link-")
	a.addBool("await-link", r.AwaitLink)
	r.Copy.addArgs(&a)
	a.addString("cpu-parts", cpuPartsValue(r.CPUParts))
	a.addString("probes", probesValue(r.Probes))
	if r.Pods > 1 {
		a.addInt("pods", r.Pods)
	}
	return a
}

// args collects --name=value flags, skipping zero values.
type args []string

func (a *args) addString(name, v string) {
	if v != "" {
		*a = append(*a, "--"+name+"="+v)
	}
}

func (a *args) addInt(name string, v int) {
	if v != 0 {
		*a = append(*a, "--"+name+"="+strconv.Itoa(v))
	}
}

func (a *args) addFloat(name string, v float64) {
	if v != 0 {
		*a = append(*a, "--"+name+"="+strconv.FormatFloat(v, 'f', -1, 64))
	}
}

func (a *args) addDuration(name string, v time.Duration) {
	if v != 0 {
		*a = append(*a, "--"+name+"="+v.String())
	}
}

func (a *args) addBool(name string, v bool) {
	if v {
		*a = append(*a, "--"+name)
	}
}

// Flags holds the parsed flags until Run is called.
type Flags struct {
	fs    *flag.FlagSet
	storm int
	r     Run
}

// BindFlags declares on fs the flags Args renders. Every default is the zero value, which is what
// Args leaves out: the operator's Run is the only source of settings, with no second set of
// defaults on the runner's side.
func BindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	r, l := &f.r, &f.r.Load
	fs.StringVar(&r.Engine, "engine", "", "the server's engine: "+EnginePostgreSQL+" (the default: pgbench) or "+EngineMySQL+
		" (sysbench)")
	fs.BoolVar(&r.Init, "init", false, "initialize the pgbench tables (pgbench -i) instead of running a load")
	fs.IntVar(&r.Scale, "scale", 0, "scale factor of --init (pgbench -s); with --engine="+EngineMySQL+", of the load too")
	fs.DurationVar(&r.WaitTimeout, "wait-timeout", 0, "how long to wait for the server to accept a connection (0: the runner's default)")
	fs.StringVar(&l.Builtin, "builtin", "", "builtin script (pgbench -b)")
	fs.BoolVar(&l.Script, "script", false, "run the inline script of $"+ScriptEnv+" (pgbench -f)")
	fs.StringVar(&l.Protocol, "protocol", "", "query protocol: simple, extended or prepared (pgbench -M)")
	fs.IntVar(&l.Clients, "clients", 0, "concurrent sessions, split across the tunnels (pgbench -c)")
	fs.IntVar(&l.Threads, "threads", 0, "worker threads, split across the tunnels (pgbench -j)")
	fs.DurationVar(&l.Duration, "duration", 0, "duration of the load, in whole seconds (pgbench -T)")
	fs.IntVar(&l.Transactions, "transactions", 0, "transactions per client, instead of --duration (pgbench -t)")
	fs.BoolVar(&l.Reconnect, "reconnect", false, "open a connection per transaction (pgbench -C)")
	fs.DurationVar(&l.ProgressInterval, "progress-interval", 0, "period of the progress reports (pgbench -P)")
	fs.DurationVar(&l.StallTimeout, "stall-timeout", 0, "fail when no transaction completes for this long (0: never)")
	fs.Float64Var(&l.Rate, "rate", 0, "run open-loop at this many transactions per second, split across the tunnels (pgbench -R)")
	fs.DurationVar(&l.LatencyLimit, "latency-limit", 0,
		"count longer transactions as late; with --rate, skip those this far behind (pgbench -L)")
	fs.DurationVar(&r.Warmup, "warmup", 0, "run the load this long first, through the same path, and discard its figures")
	fs.Float64Var(&r.ExpectedTPS, "expected-tps", 0, "the path's tps in earlier runs: sizes the transaction log's sampling without a warm-up")
	fs.IntVar(&f.storm, "storm", 0, "after the load, open this many connections one after the other (select 1 each)")
	fs.IntVar(&r.Tunnels, "tunnels", 0, "SSH tunnels, at least 1: run one pgbench per tunnel, on ports tunnel-port+i")
	fs.IntVar(&r.Pods, "pods", 0, "runner pods sharing the load (an Indexed Job); this pod's index is $"+PodIndexEnv)
	fs.IntVar(&r.TunnelPort, "tunnel-port", 0, "loopback port of the first tunnel")
	fs.StringVar(&r.SSHLogDir, "ssh-log-dir", "", "folder of the tunnels' ssh -v logs")
	fs.StringVar((*string)(&r.Pooler), "pooler", "", "the connection goes through a pooler: "+PoolerPgBouncer+
		" (admin console readable), "+PoolerOpaque+" or "+PoolerMySQL)
	fs.StringVar(&r.ResultConfigMap, "result-configmap", "", "ConfigMap of the pod's namespace to store the whole report in")
	r.Link.bindFlags(fs, "link-", "the emulated link to measure the path against")
	fs.BoolVar(&r.AwaitLink, "await-link", false, "wait until the operator marks the emulated link as in place in --result-configmap")
	r.Copy.bindFlags(fs)
	fs.StringVar(&r.PoolerMetrics, "pooler-metrics", "", "host:port of an opaque pooler's PgBouncer exporters (CloudNativePG's), "+
		"or of the MySQL pooler's counters")
	fs.StringVar(&r.PoolerPart, "pooler-part", "", "the pooler's part of the path in the run's cost")
	fs.Func("cpu-parts", "sidecars whose CPU to sample, as container=port,...", func(s string) (err error) {
		r.CPUParts, err = parseCPUParts(s)
		return err
	})
	fs.Func("probes", "texts to read over HTTP at both ends of the load, for the transport, as name=url,...",
		func(s string) (err error) {
			r.Probes, err = parseProbes(s)
			return err
		})
	return f
}

// Run returns the parsed run once it is valid. The run takes no positional arguments: pgbench's
// command line is the runner's to build, from the Load.
func (f *Flags) Run() (Run, error) {
	if f.fs.NArg() > 0 {
		return Run{}, fmt.Errorf("unexpected arguments %q: pgbench's settings are flags (--builtin, --clients, ...)", f.fs.Args())
	}
	// Checked before the conversion to int32, which would wrap.
	if f.storm < 0 || f.storm > MaxStorm {
		return Run{}, fmt.Errorf("invalid run: %s", stormRange(f.storm))
	}
	r := f.r
	r.Storm = int32(f.storm)
	if err := r.Validate(); err != nil {
		return Run{}, err
	}
	return r, nil
}

func stormRange(n int) string {
	return fmt.Sprintf("--storm %d is out of range 0..%d", n, MaxStorm)
}

// Validate reports a run the runner cannot carry out as asked, before anything starts: a mistake on
// either side of the contract fails the Job with its reason instead of measuring something else.
func (r Run) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if r.WaitTimeout < 0 {
		add("--wait-timeout must not be negative")
	}
	if r.Tunnels < 1 {
		add("--tunnels must be at least 1, not %d", r.Tunnels)
	}
	errs = append(errs, r.engineProblems()...)
	if r.TunnelPort < 0 || r.TunnelPort+max(r.Tunnels, 1)-1 > 65535 {
		add("--tunnel-port %d leaves no port for every tunnel", r.TunnelPort)
	}
	if r.Tunnels > 1 && r.TunnelPort == 0 {
		add("--tunnels=%d needs --tunnel-port", r.Tunnels)
	}
	switch r.Pooler {
	case "", PoolerPgBouncer, PoolerOpaque, PoolerMySQL:
	default:
		add("--pooler must be %s, %s or %s, not %q", PoolerPgBouncer, PoolerOpaque, PoolerMySQL, r.Pooler)
	}
	if r.PoolerMetrics != "" && r.Pooler != PoolerOpaque && r.Pooler != PoolerMySQL {
		add("--pooler-metrics applies only to --pooler=%s or %s", PoolerOpaque, PoolerMySQL)
	}
	if r.Pooler == PoolerMySQL && r.PoolerMetrics == "" {
		add("--pooler=%s needs --pooler-metrics, where it serves its counters", PoolerMySQL)
	}
	if r.Warmup < 0 {
		add("--warmup must not be negative")
	}
	errs = append(errs, r.Link.problems("link-")...)
	if r.AwaitLink && (!r.Link.Emulated() || r.ResultConfigMap == "") {
		add("--await-link needs an emulated link (--link-rtt or --link-bandwidth) and --result-configmap")
	}
	if r.Storm < 0 || r.Storm > MaxStorm {
		add("%s", stormRange(int(r.Storm)))
	}
	errs = append(errs, cpuPartProblems(r.CPUParts)...)
	errs = append(errs, probeProblems(r.Probes)...)
	if r.Pods < 0 || r.Pods > MaxPods {
		add("--pods must be between 1 and %d, not %d", MaxPods, r.Pods)
	}
	if r.Pods > 1 && (r.ResultConfigMap == "" || r.Init || r.Copy.Set() || r.Load.Clients < r.Pods*max(r.Tunnels, 1)) {
		add("--pods=%d needs --result-configmap (where the pods meet), a pgbench load and at least one client per pod and "+
			"tunnel", r.Pods)
	}
	if r.Init {
		if r.Load != (Load{}) {
			add("--init runs no load: the load flags do not apply")
		}
		if r.Storm != 0 {
			add("--storm does not apply to --init")
		}
		if r.Warmup != 0 {
			add("--warmup does not apply to --init")
		}
		if r.Link.Emulated() {
			add("--link-rtt and --link-bandwidth do not apply to --init: initialization measures nothing")
		}
		if r.Scale < 0 {
			add("--scale must not be negative")
		}
	} else {
		if r.Scale != 0 && r.Engine != EngineMySQL {
			add("--scale applies only to --init")
		}
		switch {
		case r.Copy.Set() && r.Load != (Load{}):
			add("--copy-bytes replaces the pgbench load: the load flags do not apply")
		case r.Copy.Set() && r.Storm != 0:
			add("--storm does not apply to a copy load")
		case !r.Copy.Set():
			errs = append(errs, r.Load.problems()...)
		}
	}
	errs = append(errs, r.Copy.problems()...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid run: %s", strings.Join(errs, "; "))
	}
	return nil
}

// problems lists what makes a load impossible to run.
func (l Load) problems() []string {
	var errs []string
	switch {
	case l.Builtin != "" && l.Script:
		errs = append(errs, "--builtin and --script are mutually exclusive")
	case l.Builtin == "" && !l.Script:
		errs = append(errs, "one of --builtin or --script is required")
	}
	switch {
	case l.Duration != 0 && l.Transactions != 0:
		errs = append(errs, "--duration and --transactions are mutually exclusive")
	case l.Duration == 0 && l.Transactions == 0:
		// pgbench would run its own default of 10 transactions, which nobody asked for.
		errs = append(errs, "one of --duration or --transactions is required")
	}
	switch l.Protocol {
	case "", "simple", "extended", "prepared":
	default:
		errs = append(errs, fmt.Sprintf("--protocol must be simple, extended or prepared, not %q", l.Protocol))
	}
	if l.Clients < 0 || l.Threads < 0 || l.Transactions < 0 || l.Duration < 0 || l.ProgressInterval < 0 || l.StallTimeout < 0 ||
		l.Rate < 0 || l.LatencyLimit < 0 {
		errs = append(errs, "--clients, --threads, --transactions, --duration, --progress-interval, --stall-timeout, --rate "+
			"and --latency-limit must not be negative")
	}
	return errs
}
