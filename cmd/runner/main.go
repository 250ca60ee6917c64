// Command tunnelbench-runner runs inside a benchmark Job's pod.
//
//	tunnelbench-runner run --tunnels=N [--init --scale=N | --builtin=NAME|--script --clients=N ...]
//	    [--termination-log PATH] [--pgbench PATH]
//	    waits for the server, runs pgbench as the flags say (runspec.Run: the operator renders
//	    them), streams its output and writes the report
//	tunnelbench-runner parse
//	    reads pgbench's stdout+stderr on stdin and prints the parsed result as JSON
//	tunnelbench-runner probe HOST:PORT
//	    exits 0 when HOST:PORT accepts a TCP connection (the sidecars' startup probe)
//	tunnelbench-runner pgbouncer [--listen ADDR:PORT --server HOST:PORT ...]
//	    writes PgBouncer's configuration (user and password from PGUSER and PGPASSWORD) and
//	    becomes PgBouncer (the pooler transport's Deployment or sidecar)
//	tunnelbench-runner link --listen ADDR:PORT --upstream HOST:PORT [--rtt D --jitter D --bandwidth BITS]
//	    forwards every connection to HOST:PORT across an emulated link (the link sidecar)
//	tunnelbench-runner sidecar --cpu-port PORT|--cpu-listen HOST:PORT -- COMMAND [ARGS...]
//	    runs COMMAND and serves its container's CPU accounting on 127.0.0.1:PORT (every sidecar)
//	    or HOST:PORT (the SSH gateway's sshd, for the runner pods)
//	tunnelbench-runner wg-gateway|wg-client --key-dir DIR ...
//	    one end of the vpn transport's WireGuard tunnel, in user space
//	tunnelbench-runner ovpn-gateway|ovpn-client --key-dir DIR --gateway-name NAME ...
//	    one end of the vpn transport's OpenVPN tunnel (root with NET_ADMIN: openvpn and a TUN device)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/engine/pgbench"
	"github.com/tunnelbench/tunnelbench/internal/engine/sysbench"
	"github.com/tunnelbench/tunnelbench/internal/runner"
	"github.com/tunnelbench/tunnelbench/internal/runner/cgroupcpu"
	"github.com/tunnelbench/tunnelbench/internal/runner/netdev"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatch(args, stdin, stdout, stderr)
}

func init() {
	register(command{name: "run", run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return runPgbench(args, stdout, stderr)
	}})
	register(command{name: "parse", run: func(_ []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return parse(stdin, stdout, stderr)
	}})
	register(command{name: "probe", run: func(args []string, _ io.Reader, _, stderr io.Writer) int {
		return probe(args, stderr)
	}})
}

func runPgbench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The run's settings are the operator's (runspec); only where things are in this container is
	// the runner's own, and the operator never sets it.
	spec := runspec.BindFlags(fs)
	// runner.Run masks these secrets in its report and its output; what this function prints
	// itself is figures and the API's errors.
	opts := runner.Options{Stdout: stdout, Stderr: stderr, Redactor: runner.Secrets()}
	var pgbenchPath, sysbenchPath string
	fs.StringVar(&pgbenchPath, "pgbench", "pgbench", "pgbench executable (PostgreSQL's load generator)")
	fs.StringVar(&sysbenchPath, "sysbench", "sysbench", "sysbench executable (MySQL's load generator)")
	fs.StringVar(&opts.TerminationLog, "termination-log", "/dev/termination-log", "where to write the report")
	fs.StringVar(&opts.CgroupRoot, "cgroup", "", "where the container's cgroup is mounted (empty: "+cgroupcpu.Root+")")
	fs.StringVar(&opts.NetDev, "netdev", "", "the pod's interface counters (empty: "+netdev.Path+")")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	r, err := spec.Run()
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner run: %v\n", err)
		return 2
	}
	opts.Run, opts.Generator = r, pgbench.Generator{Path: pgbenchPath}
	if r.Engine == runspec.EngineMySQL {
		opts.Generator = sysbench.Generator{Path: sysbenchPath}
	}
	if r.ResultConfigMap != "" {
		results, err := runner.OpenResultConfigMap(r.ResultConfigMap)
		if err != nil {
			// Before any load: the run could not deliver its result.
			fmt.Fprintf(stderr, "tunnelbench-runner run: %v\n", err)
			if b, encErr := report.Encode(report.Report{Failure: &report.Failure{Reason: conditions.ReasonJobFailed,
				Message: err.Error()}}); encErr == nil {
				_ = os.WriteFile(opts.TerminationLog, b, 0o644)
			}
			return 1
		}
		if r.Pods > 1 {
			// One pod of an Indexed Job: its index decides its share and its keys.
			index, err := strconv.Atoi(os.Getenv(runspec.PodIndexEnv))
			if err != nil {
				index = -1
			}
			opts.PodIndex, results = index, results.ForPod(r.Pods, index)
			opts.AwaitStart, opts.AwaitWindow = results.AwaitStart, results.AwaitWindow
		}
		opts.Store, opts.AwaitLink, opts.Live = results.Store, results.AwaitLink, results.StoreLive
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rep, err := runner.Run(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner: %v\n", err)
		return 1
	}
	if rep.Result != nil {
		fmt.Fprintf(stdout, "tunnelbench-runner: tps=%.3f latency=%.3fms transactions=%d failed=%d\n",
			rep.Result.TPS, rep.Result.LatencyAvgMs, rep.Result.Transactions, rep.Result.FailedTransactions)
	}
	if p := rep.Pooler; p != nil && p.Counted {
		fmt.Fprintf(stdout, "tunnelbench-runner: the pooler counted %d transactions; %d server connections (tls %q)\n",
			p.Transactions, p.ServerConnections, p.ServerTLS)
	}
	if s := rep.Storm; s != nil {
		fmt.Fprintf(stdout, "tunnelbench-runner: storm of %d connections: %.1f connections/s, connect %.3f ms\n",
			s.Connections, s.PerSecond, s.MeanConnectMs)
	}
	return 0
}

func probe(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: tunnelbench-runner probe HOST:PORT")
		return 2
	}
	c, err := net.DialTimeout("tcp", args[0], time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner probe: %v\n", err)
		return 1
	}
	_ = c.Close()
	return 0
}

func parse(stdin io.Reader, stdout, stderr io.Writer) int {
	res, err := pgbench.Parse(stdin)
	if err != nil {
		var runErr *engine.RunError
		if errors.As(err, &runErr) && runErr.LastError == "" {
			fmt.Fprintf(stderr, "tunnelbench-runner parse: %v (did pgbench die before its summary?)\n", err)
		} else {
			fmt.Fprintf(stderr, "tunnelbench-runner parse: %v\n", err)
		}
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner parse: %v\n", err)
		return 1
	}
	return 0
}
