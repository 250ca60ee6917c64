// Package report is the contract between the runner and the operator. The runner stores its whole
// Report (Marshal) in the run's result ConfigMap, which outlives the pod, and writes a short form
// (Encode, within the kubelet's 4 KiB) as its container's termination message, which explains a
// failure even when the ConfigMap could not be written.
package report

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

// MaxSize is the kubelet's limit on a termination message.
const MaxSize = 4096

// Report is one runner's outcome: a result or a failure.
type Report struct {
	// Result is the load generator's summary, with its per-interval progress (at most MaxProgressPoints,
	// and none in the termination message).
	Result *engine.Result `json:"result,omitempty"`
	// Latency is the distribution of the measured run's transaction latencies.
	Latency *Latency `json:"latency,omitempty"`
	// TLS is the TLS session the server reported for the runner's preflight connection.
	TLS *TLS `json:"tls,omitempty"`
	// ServerVersion is the server's server_version, as it reported it at login.
	ServerVersion string `json:"serverVersion,omitempty"`
	// PgbenchVersion is `pgbench --version` as the runner's pgbench prints it.
	PgbenchVersion string `json:"pgbenchVersion,omitempty"`
	// SSH is what the tunnels negotiated, from ssh's own log.
	SSH *sshtunnel.Negotiated `json:"ssh,omitempty"`
	// Tunnels are the per-tunnel figures when several pgbench processes ran, one per tunnel.
	Tunnels []Tunnel `json:"tunnels,omitempty"`
	// Pooler is what the runner saw of a pooler: its own TLS session with it and, when its admin
	// console is readable, the pooler's counters.
	Pooler *Pooler `json:"pooler,omitempty"`
	// Storm is the connection storm's outcome.
	Storm *Storm `json:"storm,omitempty"`
	// Link is the path as measured before the load, when a link is emulated.
	Link *Link `json:"link,omitempty"`
	// Copy is a copy load's outcome, instead of Result.
	Copy *Copy `json:"copy,omitempty"`
	// CPU is what the runner's own container (pgbench and the runner) used during the measured
	// window, from its cgroup; absent where the cgroup could not be read.
	CPU *CPU `json:"cpu,omitempty"`
	// Sidecars is what each sampled sidecar's container used over the same window, in the pod's
	// order; a sidecar that did not answer is absent.
	Sidecars []SidecarCPU `json:"sidecars,omitempty"`
	// Wire is what crossed the runner pod's network interfaces (loopback aside) during the window;
	// absent where the counters could not be read.
	Wire *Wire `json:"wire,omitempty"`
	// Setup is a connection's setup through the path, phase by phase, probed after the window.
	Setup *Setup `json:"setup,omitempty"`
	// Unmeasured are the parts asked for whose CPU is not known, with why: never a guess.
	Unmeasured []Unmeasured `json:"unmeasured,omitempty"`
	// Probes are the texts the transport asked for (runspec.Probe), read at both ends of the load.
	Probes []Probe `json:"probes,omitempty"`
	// Command is the pgbench command line that ran.
	Command string `json:"command,omitempty"`
	// Executed is the measured load's pgbench processes exactly as the runner started them, the
	// flags it adds included (the transaction log, its sampling rate, a tunnel's port), "; "
	// between processes: what a user reruns by hand to measure the same thing.
	Executed string `json:"executed,omitempty"`
	// Window, for a pod of a run of several, is its figures cut to the stretch every pod of the
	// run was loading the server (its Latency is cut to it too).
	Window *Window `json:"window,omitempty"`
	// StartTime and EndTime bound the pgbench run.
	StartTime time.Time `json:"startTime,omitzero"`
	EndTime   time.Time `json:"endTime,omitzero"`
	// Failure explains a failed run.
	Failure *Failure `json:"failure,omitempty"`
}

// Window is a run's figures within the stretch every one of its runner pods was loading the
// server: from the latest pod's first transaction's start to the earliest pod's last transaction's
// end. The pods started together, so it loses only the moments one pod loaded the server alone.
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Transactions are the transactions that ended within it (estimated from the logged sample
	// when pgbench logged one in several); TPS is them over its length.
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
}

// Seconds is the window's length.
func (w *Window) Seconds() float64 { return w.End.Sub(w.Start).Seconds() }

// CPU is a container's CPU accounting over a window, from its cgroup (internal/runner/cgroupcpu).
type CPU struct {
	// UserSeconds and SystemSeconds are its CPU time in user and kernel mode.
	UserSeconds   float64 `json:"user"`
	SystemSeconds float64 `json:"system"`
	// WindowSeconds is the window's length, between the two samples.
	WindowSeconds float64 `json:"window"`
	// Periods and Throttled count the CFS periods under a CPU limit and those it ran out of its
	// quota in; ThrottledSeconds is how long it waited for the next period. Zero without a limit.
	Periods          uint64  `json:"periods,omitempty"`
	Throttled        uint64  `json:"throttled,omitempty"`
	ThrottledSeconds float64 `json:"throttledSeconds,omitempty"`
	// CgroupVersion is the accounting read (1 or 2).
	CgroupVersion int `json:"cgroup"`
	// Threads is where its threads' time went within the load, from the scheduler's per-thread
	// accounting (internal/runner/schedstat); absent where they could not be read.
	Threads *Threads `json:"threads,omitempty"`
}

// Threads is a part's threads over a window inside the load (a margin after its start, a margin
// before its end, when every connection is open: its threads and the server's backends alive at
// both ends): their time on a CPU and waiting for one, summed, and the most one of them was on a
// CPU.
type Threads struct {
	// WindowSeconds is the window's length.
	WindowSeconds  float64 `json:"window"`
	OnCPUSeconds   float64 `json:"onCPU"`
	WaitedSeconds  float64 `json:"waited"`
	BusiestSeconds float64 `json:"busiest"`
	// Count are the threads seen at the window's end, Started those not seen at its start, Lost
	// those seen at its start only (their last stretch is missing from the sums).
	Count   int `json:"n"`
	Started int `json:"started,omitempty"`
	Lost    int `json:"lost,omitempty"`
}

// SidecarCPU is one sidecar container's CPU accounting over the window.
type SidecarCPU struct {
	// Part is the container's name: tunnel-0, link, pgbouncer; or a peer pod's part: gateway.
	Part string `json:"part"`
	// Remote marks a part in another pod than the runner's (the SSH gateway).
	Remote bool `json:"remote,omitempty"`
	CPU
}

// Wire is the bytes and packets a pod's interfaces received and sent over a window.
type Wire struct {
	ReceivedBytes   uint64  `json:"receivedBytes"`
	SentBytes       uint64  `json:"sentBytes"`
	ReceivedPackets uint64  `json:"receivedPackets"`
	SentPackets     uint64  `json:"sentPackets"`
	WindowSeconds   float64 `json:"window"`
}

// Setup is the median time of each phase of a connection's setup over Probes connections: the
// name's resolution, the TCP connection to the path's first hop, the TLS handshake (with
// PostgreSQL's SSLRequest; 0 without TLS), and the startup (authentication and the backend's
// start, or a pooler's login), and all of it.
type Setup struct {
	Probes    int     `json:"probes"`
	ResolveMs float64 `json:"resolveMs"`
	TCPMs     float64 `json:"tcpMs"`
	TLSMs     float64 `json:"tlsMs"`
	StartupMs float64 `json:"startupMs"`
	TotalMs   float64 `json:"totalMs"`
}

// Unmeasured is a part whose CPU over the window is not known.
type Unmeasured struct {
	Part   string `json:"part"`
	Reason string `json:"reason"`
}

// Latency is an HDR histogram of transaction latencies from pgbench's transaction logs.
type Latency struct {
	// Histogram is the histogram of latencies in microseconds, in HdrHistogram's compressed V2
	// encoding (base64); internal/analysis/latency reads it.
	Histogram string `json:"histogram" texts:"-"`
	// SamplingRate is pgbench's --sampling-rate: the fraction of transactions logged.
	SamplingRate float64 `json:"samplingRate"`
	// Samples is the number of latencies in the histogram; Failed and Skipped count the logged
	// transactions that failed or were skipped (sampled like the others).
	Samples int64 `json:"samples"`
	Failed  int64 `json:"failed,omitempty"`
	Skipped int64 `json:"skipped,omitempty"`
}

// MaxProgressPoints bounds the progress points a report carries: a 24-hour run at a 1 s interval
// would print 86,400, more than a ConfigMap holds; longer runs are averaged over longer intervals.
const MaxProgressPoints = 1200

// Marshal renders the whole report for the result ConfigMap.
func Marshal(r Report) ([]byte, error) {
	if r.Result != nil && len(r.Result.Progress) > MaxProgressPoints {
		capped := *r.Result
		capped.Progress = engine.Downsample(capped.Progress, MaxProgressPoints)
		r.Result = &capped
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("while encoding the report: %w", err)
	}
	return b, nil
}

// Copy is one COPY of a data set through the path: what crossed and how fast.
type Copy struct {
	Table         string  `json:"table"`
	Data          string  `json:"data"`
	Bytes         int64   `json:"bytes"`
	Rows          int64   `json:"rows"`
	Seconds       float64 `json:"seconds"`
	MBPerSecond   float64 `json:"mbPerSecond"`
	RowsPerSecond float64 `json:"rowsPerSecond"`
}

// Link is a path as the runner measured it: the median RTT of `select 1` on one connection, the
// median connection time, and the throughput of a COPY of random data (when a bandwidth was
// asked).
type Link struct {
	RTTMs         float64 `json:"rttMs"`
	ConnectMs     float64 `json:"connectMs"`
	BitsPerSecond int64   `json:"bitsPerSecond,omitempty"`
}

// TLS is a negotiated TLS session as pg_stat_ssl reports it.
type TLS struct {
	Version string `json:"version"`
	Cipher  string `json:"cipher"`
}

// Pooler is the client side of a pooler hop and the pooler's own counters.
type Pooler struct {
	// ClientTLS is the runner's TLS session with the pooler; nil for plain TCP.
	ClientTLS *TLS `json:"clientTLS,omitempty"`
	// Counted is false when the admin console was not read (a CloudNativePG Pooler).
	Counted bool `json:"counted,omitempty"`
	// Transactions is the growth of SHOW STATS' total_xact_count during the pgbench run.
	Transactions int64 `json:"transactions,omitempty"`
	// WaitSeconds is the growth of SHOW STATS' total_wait_time over the same stretch: how long its
	// clients waited for a server connection, in all; WaitCounted says it was read. Part is the
	// pooler's part of the path (runspec.Run.PoolerPart).
	WaitSeconds float64 `json:"waitSeconds,omitempty"`
	WaitCounted bool    `json:"waitCounted,omitempty"`
	Part        string  `json:"part,omitempty"`
	// ServerConnections and ServerTLS come from SHOW SERVERS at the end of the run.
	ServerConnections int    `json:"serverConnections,omitempty"`
	ServerTLS         string `json:"serverTLS,omitempty"`
	// Version is SHOW VERSION's answer.
	Version string `json:"version,omitempty"`
}

// Storm is a connection storm's pgbench summary.
type Storm struct {
	Connections   int64   `json:"connections"`
	Failed        int64   `json:"failed"`
	PerSecond     float64 `json:"perSecond"`
	MeanConnectMs float64 `json:"meanConnectMs"`
	Command       string  `json:"command"`
	// BatchConnectMs are the mean connect times of the storm's batches, in order.
	BatchConnectMs []float64 `json:"batchConnectMs,omitempty"`
}

// Tunnel is one tunnel's pgbench figures, with short keys: 32 of them must fit in the
// termination message.
type Tunnel struct {
	Index        int     `json:"i"`
	TPS          float64 `json:"tps"`
	LatencyAvgMs float64 `json:"lat"`
	Transactions int64   `json:"tx"`
	Failed       int64   `json:"f"`
}

// Failure is a classified error. Reason is one of the API's failure reasons.
type Failure struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Encode renders the report within MaxSize: progress points are dropped, then per-tunnel figures
// if they still do not fit, and an over-long failure message is shortened, so the summary always
// fits.
func Encode(r Report) ([]byte, error) {
	if r.Result != nil {
		trimmed := *r.Result
		trimmed.Progress = nil
		r.Result = &trimmed
	}
	// The histogram lives in the result ConfigMap only.
	r.Latency = nil
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("while encoding the report: %w", err)
	}
	if len(b) > MaxSize && len(r.Tunnels) > 0 {
		r.Tunnels = nil
		if b, err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	if len(b) <= MaxSize || r.Failure == nil {
		return b, nil
	}
	f := *r.Failure
	overflow := len(b) - MaxSize + len("…") + 16
	if overflow < len(f.Message) {
		f.Message = f.Message[:len(f.Message)-overflow] + "…"
	} else {
		f.Message = ""
	}
	r.Failure = &f
	return json.Marshal(r)
}

// Decode parses a report: a termination message or a result ConfigMap's.
func Decode(message string) (*Report, error) {
	var r Report
	if err := json.Unmarshal([]byte(message), &r); err != nil {
		return nil, fmt.Errorf("the runner's termination message is not a report: %w", err)
	}
	if r.Result == nil && r.Failure == nil && r.Command == "" {
		return nil, fmt.Errorf("the runner's termination message holds no report")
	}
	r.Bound()
	return &r, nil
}

// Probe is one runspec.Probe's text before and after the measured load, each bounded
// (MaxProbeText); Error says why one could not be read.
type Probe struct {
	Name   string `json:"name"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Error  string `json:"error,omitempty"`
}

// MaxProbeText bounds a probe's text in the report.
const MaxProbeText = 16 << 10

// ProbeNamed is the report's probe of that name, nil when it has none.
func (r *Report) ProbeNamed(name string) *Probe {
	for i := range r.Probes {
		if r.Probes[i].Name == name {
			return &r.Probes[i]
		}
	}
	return nil
}
