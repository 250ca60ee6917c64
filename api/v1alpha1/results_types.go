package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HistoryRecord is whether a benchmark's results reached the history store.
type HistoryRecord struct {
	// Recorded is true once the results are in the store (written once: recording again changes
	// nothing).
	Recorded bool `json:"recorded"`
	// Time is when they were recorded, or when the last attempt failed.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// Attempts counts the attempts made.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Message says why not yet (the store unreachable, retried with backoff).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// SweepStatus is what a sweep measured at each point and every transport's curve. The points'
// results are status.results, each with its point.
type SweepStatus struct {
	// Parameter is what the sweep varies.
	Parameter SweepParameter `json:"parameter"`
	// Points are the sweep's values, in the spec's order, each with its best transport.
	// +kubebuilder:validation:MaxItems=16
	Points []SweepPoint `json:"points"`
	// Curves are each transport's figures across the points, with knee and peak, in spec order,
	// once every point has at least one run of the transport.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Curves []SweepCurve `json:"curves,omitempty"`
}

// SweepPoint is one value of a sweep and its best transport; what every transport measured at it
// is in status.results, the entries whose point is this value.
type SweepPoint struct {
	// Value is the swept parameter's value.
	Value int32 `json:"value"`
	// Best is the point's fastest transport, as status.best of a benchmark without a sweep.
	// +optional
	Best *BestTransport `json:"best,omitempty"`
}

// SweepCurve is how one transport's figure moves as the swept parameter grows.
type SweepCurve struct {
	Transport string `json:"transport"`
	// Points are the transport's median figure at each value, with its interval, its latency and
	// its gain over the previous point.
	// +kubebuilder:validation:MaxItems=16
	Points []CurvePoint `json:"points"`
	// Knee is the value of the last point whose gain over the previous point is significant: its
	// paired interval (Holm-adjusted over the curve's steps) lies wholly above 1 + KneeMinGain.
	// The first value when no step gains; unset until every point has two rounds.
	// +optional
	Knee *int32 `json:"knee,omitempty"`
	// Saturated is true when a later point than the knee was measured: the curve stopped gaining
	// within the sweep. False with the knee at the last point: it may still gain beyond.
	Saturated bool `json:"saturated"`
	// KneeReason says how the knee was found, or why there is none.
	// +kubebuilder:validation:MaxLength=1024
	KneeReason string `json:"kneeReason"`
	// Peak is the value with the highest median figure, and PeakTPS that median tps.
	Peak    int32   `json:"peak"`
	PeakTPS float64 `json:"peakTPS"`
}

// CurvePoint is a transport's figures at one point of a sweep.
type CurvePoint struct {
	Value int32 `json:"value"`
	// Runs is how many runs of the point count.
	Runs int32 `json:"runs"`
	// TPS is the median tps over the point's runs, and TPSLow and TPSHigh the distribution-free
	// interval of that median at Confidence (the fewest runs bound it with less than 95 %: 3 runs
	// give their range at 75 %).
	TPS float64 `json:"tps"`
	// +optional
	TPSLow *float64 `json:"tpsLow,omitempty"`
	// +optional
	TPSHigh *float64 `json:"tpsHigh,omitempty"`
	// +optional
	Confidence float64 `json:"confidence,omitempty"`
	// LatencyAvgMs is the median of the runs' mean latency; P50Ms and P99Ms the merged
	// histogram's percentiles, when its samples support them.
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// +optional
	P50Ms *float64 `json:"p50Ms,omitempty"`
	// +optional
	P99Ms *float64 `json:"p99Ms,omitempty"`
	// Gain is this point's figure over the previous point's, round by round, with its interval
	// and verdict; absent at the first point.
	// +optional
	Gain *Comparison `json:"gain,omitempty"`
	// Limiter is the part that ran out in most of the point's runs, with how many, e.g.
	// "client in 3/3 runs"; absent when none did.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Limiter string `json:"limiter,omitempty"`
}

// RunOrderStatus is the order a benchmark runs its transports in, recorded when it starts.
type RunOrderStatus struct {
	// Order is spec.load.order with its default applied.
	Order RunOrder `json:"order"`
	// Seed is the seed of the random order: spec.load.seed, or the one derived from the UID.
	Seed int64 `json:"seed"`
	// Rounds lists the transports in the order they run, one entry per round for an interleaved
	// benchmark (e.g. "tls ssh direct"), one entry for a sequential one; a sweep's entries name
	// transport and point (e.g. "ssh@4 direct@1 ssh@1 direct@4").
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=1800
	Rounds []string `json:"rounds"`
}

// BestTransport is the answer to "which path is fastest", only as strong as the repetitions allow.
type BestTransport struct {
	// Transport is the transport with the highest median tps (MB/s for a copy load).
	Transport string `json:"transport"`
	// TPS is its median transactions per second; zero for a copy load.
	TPS float64 `json:"tps"`
	// MBPerSecond is its median MB/s, for a copy load.
	// +optional
	MBPerSecond float64 `json:"mbPerSecond,omitempty"`
	// RoundedTPS is TPS rounded to a whole number, for the printer column.
	RoundedTPS int64 `json:"roundedTPS"`
	// Significant is true when the transport is faster than every other at 95 %: each paired
	// interval of the others' tps over its own lies below 1.
	Significant bool `json:"significant"`
	// Ties names the transports that cannot be told apart from Transport (their interval
	// contains 1, or there was one repetition), Transport first; empty when Significant.
	// +optional
	Ties []string `json:"ties,omitempty"`
	// Summary is the answer in words, e.g. "direct" or "tie: direct, tls".
	Summary string `json:"summary"`
}

// Spread is how a figure varied over a transport's repetitions.
type Spread struct {
	// Median is the middle repetition's figure (the mean of the two middle ones for an even
	// count): the figure reported, since one disturbed repetition moves it less than the mean.
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is the coefficient of variation (sample standard deviation over mean); unset with one
	// repetition.
	// +optional
	CV *float64 `json:"cv,omitempty"`
}

// Verdict is what the paired repetitions let a report claim about a transport against the
// baseline at 95 %.
// +kubebuilder:validation:Enum=faster;slower;indistinguishable;baseline
type Verdict string

// Verdicts of a comparison.
const (
	VerdictFaster            Verdict = "faster"
	VerdictSlower            Verdict = "slower"
	VerdictIndistinguishable Verdict = "indistinguishable"
	VerdictBaseline          Verdict = "baseline"
)

// Comparison is a transport's tps against the baseline's (the first transport), round by round.
type Comparison struct {
	// Baseline is the transport compared with.
	Baseline string `json:"baseline"`
	// Ratio is the geometric mean over paired rounds of this transport's tps over the baseline's
	// (unpaired: the ratio of the geometric means).
	Ratio float64 `json:"ratio"`
	// Lower and Upper bound the ratio's confidence interval (Student's t on the log-ratios of the
	// paired rounds, or Welch's on the log rates when unpaired), at 95 % or higher when adjusted
	// across the transports (Holm); unset with one pair.
	// +optional
	Lower *float64 `json:"lower,omitempty"`
	// +optional
	Upper *float64 `json:"upper,omitempty"`
	// Pairs is the number of rounds compared (unpaired: the fewer runs of the two sides).
	Pairs int32 `json:"pairs"`
	// Verdict: faster or slower when the whole interval lies above or below 1, indistinguishable
	// when it contains 1 or there is no interval, baseline for the baseline itself.
	Verdict Verdict `json:"verdict"`
	// Reason says why, e.g. "95% interval [0.712, 0.803] over 3 repetitions lies below 1".
	Reason string `json:"reason"`
	// Level is the confidence level of Lower and Upper: 0.95, or higher for a transport whose
	// verdict was adjusted with the others' (Holm).
	// +optional
	Level float64 `json:"level,omitempty"`
	// Method is how the runs were compared: paired (round i with round i of the baseline, an
	// interleaved benchmark) or unpaired (Welch's interval on all runs of either, a sequential one).
	// +optional
	Method ComparisonMethod `json:"method,omitempty"`
	// MixedPlacement is true when this transport's runs and the baseline's did not run on the same
	// nodes (runner, server): the ratio then mixes a difference of placement with the path's.
	// +optional
	MixedPlacement bool `json:"mixedPlacement,omitempty"`
}

// ComparisonMethod is how a transport's runs are compared with the baseline's.
// +kubebuilder:validation:Enum=paired;unpaired
type ComparisonMethod string

const (
	// MethodPaired compares round i with round i of the baseline (Student's t on log-ratios).
	MethodPaired ComparisonMethod = "paired"
	// MethodUnpaired compares all runs of either side (Welch's t on log rates).
	MethodUnpaired ComparisonMethod = "unpaired"
)

// LatencyDistribution is where a transport's transaction latencies lie, in milliseconds. Each
// percentile is within 0.1 % of the exact order statistic of the logged transactions, and given
// only when at least 10 of them lie beyond it (p99 needs 1,000 samples, p99.9 10,000): with fewer
// it is one or two transactions' latency, and Unsupported names it instead.
type LatencyDistribution struct {
	P50Ms float64 `json:"p50Ms"`
	// +optional
	P90Ms *float64 `json:"p90Ms,omitempty"`
	// +optional
	P99Ms *float64 `json:"p99Ms,omitempty"`
	// +optional
	P999Ms *float64 `json:"p999Ms,omitempty"`
	MaxMs  float64  `json:"maxMs"`
	// Samples is the number of latencies behind the figures.
	Samples int64 `json:"samples"`
	// EffectiveSamples is what the samples are worth once weighted by their runs' sampling rates
	// (Kish's effective sample size; Samples when every run logged at the same rate): the evidence
	// the percentiles rest on.
	// +optional
	EffectiveSamples int64 `json:"effectiveSamples,omitempty"`
	// Unsupported names the percentiles left out for want of samples, e.g. ["p99.9"].
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=8
	// +optional
	Unsupported []string `json:"unsupported,omitempty"`
	// SamplingRate is the lowest pgbench --sampling-rate of the runs: the fraction of
	// transactions logged (1 unless a run would have logged more than half a million). The runs
	// are merged weighted by their transactions, each sample counting 1/rate.
	SamplingRate float64 `json:"samplingRate"`
	// FailedSampled and SkippedSampled count logged transactions that failed or were skipped:
	// they have no latency and are not in the percentiles.
	// +optional
	FailedSampled int64 `json:"failedSampled,omitempty"`
	// +optional
	SkippedSampled int64 `json:"skippedSampled,omitempty"`
}

// RunSeries is one run's tps over time.
type RunSeries struct {
	// Round is the run's repetition.
	Round int32 `json:"round"`
	// Seconds is each point's end, in seconds from the start of the measured run.
	Seconds []float64 `json:"seconds"`
	// TPS is each point's transactions per second.
	TPS []float64 `json:"tps"`
}

// Steadiness is how still a run's tps held.
type Steadiness struct {
	// Change is the least-squares trend's change of tps across the run over its mean (+0.2: it
	// climbed by a fifth).
	Change float64 `json:"change"`
	// Steady is false when the change is beyond 10 % and beyond the noise of the reports (the
	// slope's t past its 99.5 % quantile).
	Steady bool `json:"steady"`
	// SettledAfterSeconds, for a run that was not steady, is the time from its start after which
	// the rest was; absent when it never settled.
	// +optional
	SettledAfterSeconds *float64 `json:"settledAfterSeconds,omitempty"`
	// MeanErrorPercent is the standard error of the run's mean tps from the spread of its progress
	// reports, allowing for their autocorrelation, in percent of it: the noise within the run,
	// which a longer run averages away. The spread between rounds beyond it is drift a longer run
	// does not remove; `kubectl tunnelbench plan` weighs the two to advise run length or rounds.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MeanErrorPercent *float64 `json:"meanErrorPercent,omitempty"`
}

// OpenLoopRun is how an open-loop run kept its schedule.
type OpenLoopRun struct {
	// RateTPS is the rate asked (transactions per second, the whole run).
	RateTPS int32 `json:"rateTPS"`
	// ScheduleLagMs and ScheduleLagMaxMs are how late transactions started against their
	// schedule, on average and at most: what a closed loop would have hidden.
	ScheduleLagMs    float64 `json:"scheduleLagMs"`
	ScheduleLagMaxMs float64 `json:"scheduleLagMaxMs"`
	// Skipped counts transactions skipped because they were already spec.load.latencyLimit
	// behind their schedule; they are not in Transactions.
	Skipped int64 `json:"skipped"`
	// Late counts the transactions that lasted longer than spec.load.latencyLimit, when set.
	// +optional
	Late *int64 `json:"late,omitempty"`
}

// RunResult is one repetition of a transport.
type RunResult struct {
	// Round is the repetition's number, from 1.
	Round int32 `json:"round"`
	// Job is the Job that ran it.
	Job string `json:"job"`
	// TPS and LatencyAvgMs are pgbench's figures for this run.
	TPS          float64 `json:"tps"`
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// ConnectionTimeMs is pgbench's "initial connection time": how long the clients took to connect
	// before the load, each thread opening its clients one after another (the clients' start-up,
	// not one connection's cost; that is the setup probe, a storm or reconnect). With
	// spec.load.reconnect it is pgbench's average time to open one connection.
	ConnectionTimeMs float64 `json:"connectionTimeMs"`
	// Transactions and FailedTransactions are this run's counts.
	Transactions       int64 `json:"transactions"`
	FailedTransactions int64 `json:"failedTransactions"`
	// SerializationFailures and DeadlockFailures are pgbench's causes of the failed transactions.
	// +optional
	SerializationFailures int64 `json:"serializationFailures,omitempty"`
	// +optional
	DeadlockFailures int64 `json:"deadlockFailures,omitempty"`
	// Steadiness is whether the run's tps held still while it was measured, judged from pgbench's
	// progress reports (at least 5); absent with fewer.
	// +optional
	Steadiness *Steadiness `json:"steadiness,omitempty"`
	// OpenLoop is set for a run at a fixed rate (spec.load.rate): its schedule as pgbench kept it.
	// Its figure is its mean latency, which counts from each transaction's scheduled start.
	// +optional
	OpenLoop *OpenLoopRun `json:"openLoop,omitempty"`
	// Node is the node the runner pod ran on.
	// +optional
	Node string `json:"node,omitempty"`
	// ServerNode is the node of the server's pod when the operator can see it (a CloudNativePG
	// primary, the pod behind an external server's Service), at the run's end.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerNode string `json:"serverNode,omitempty"`
	// PeerNode is the node of the transport's peer next to the server (the SSH gateway, a shared
	// PgBouncer), when it has one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PeerNode string `json:"peerNode,omitempty"`
	// CycleMs is the time each client took per transaction, clients ÷ tps (Little's law), for a
	// closed loop without reconnection: pgbench's mean latency comes close to it, and far below it
	// is not believed (condition LatencyInconsistent).
	// +optional
	CycleMs *float64 `json:"cycleMs,omitempty"`
	// P99Ms is this run's 99th percentile latency in milliseconds.
	// +optional
	P99Ms *float64 `json:"p99Ms,omitempty"`
	// StartTime and EndTime bound the measured pgbench run (after the warm-up).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// MBPerSecond and RowsPerSecond are a copy run's throughput.
	// +optional
	MBPerSecond *float64 `json:"mbPerSecond,omitempty"`
	// +optional
	RowsPerSecond *float64 `json:"rowsPerSecond,omitempty"`
	// Link is the path as this run's runner measured it before the load, when a link is emulated.
	// +optional
	Link *MeasuredLink `json:"link,omitempty"`
	// Cost is what the parts of the path consumed during the measured window, each from its own
	// cgroup accounting; a part whose accounting could not be read is absent, never guessed.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Cost []PartCost `json:"cost,omitempty"`
	// Wire is what crossed the runner pod's network interfaces during the window: the path's bytes
	// after its tunnels' encryption and compression.
	// +optional
	Wire *WireCost `json:"wire,omitempty"`
	// Setup is a connection's setup through the path, phase by phase, probed by the runner after
	// the window.
	// +optional
	Setup *ConnectionSetup `json:"setup,omitempty"`
	// Unmeasured are the parts whose CPU is not known, with why (the server's when the operator
	// cannot see its pod or no node reader runs on its node; a part sampled too far from the
	// window's ends).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Unmeasured []UnmeasuredPart `json:"unmeasured,omitempty"`
	// Budget is where each transaction's round trip went, part by part, from each part's threads'
	// time on a CPU and waiting for one (Little's law over the window): for a closed-loop run
	// whose parts' threads were read.
	// +optional
	Budget *TimeBudget `json:"budget,omitempty"`
	// Limiter is the part that ran out first, with the evidence, when one did by the documented
	// thresholds (a part out of its CPU, a single thread at a full core, the runner's node, the
	// link's round trip); else latency, naming the part that held the largest share of the round
	// trip. Absent when nothing was measured.
	// +optional
	Limiter *Limiter `json:"limiter,omitempty"`
	// WindowSeconds, for a run of several runner pods, is the length of the stretch every pod was
	// loading the server (from the latest pod's first transaction to the earliest pod's last):
	// the run's and each pod's tps and transactions are counted within it.
	// +optional
	WindowSeconds *float64 `json:"windowSeconds,omitempty"`
	// Pods are each runner pod's own figures when the run ran in several (spec.runner.pods).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Pods []PodRun `json:"pods,omitempty"`
}

// PodRun is one runner pod's part of a run of several.
type PodRun struct {
	// Index is the pod's index in the Job, from 0.
	Index int32 `json:"index"`
	// Node is where it ran.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Node string `json:"node,omitempty"`
	// TPS and Transactions are its figures within the run's common window (windowSeconds), or
	// its pgbench's where the window is not known; LatencyAvgMs is its pgbench's.
	TPS          float64 `json:"tps"`
	Transactions int64   `json:"transactions"`
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// StartOffsetMs is how long after the run's first pod this one started its measured load.
	StartOffsetMs float64 `json:"startOffsetMs"`
}

// Parts of a path whose cost is measured.
const (
	// PartClient is pgbench and the runner, in the runner pod's own container.
	PartClient = "client"
	// PartNetwork is the link, as a limiter: the run was paced by its round trip.
	PartNetwork = "network"
	// PartNode is the runner's node, as a limiter: the parts on it used its cores together.
	PartNode = "node"
	// PartLatency is the round trip, as a limiter: no part ran out, and the run was paced by the
	// time each transaction spent along the path (the evidence names the part that held most).
	PartLatency = "latency"
	// PartServer is the server's pod: a CloudNativePG primary, or the pod behind an external
	// server's Service, read through the node reader of its node.
	PartServer = "server"
)

// TimeBudget is a closed-loop run's round trip (clients ÷ tps: the time from one transaction's
// start to its client's next) split by where it went. Each part's share is its threads' time on a
// CPU and waiting for one, per transaction: by Little's law the mean number of transactions the
// part was working on, over the throughput. It is a lower bound where one thread serves several
// connections (pgbench's, sshd's, PgBouncer's), since a transaction queued behind another in the
// same thread is counted in none; that, the network and the link's delay, and the parts not
// measured are the unattributed rest.
type TimeBudget struct {
	// RoundTripMs is clients ÷ tps, in milliseconds.
	RoundTripMs float64 `json:"roundTripMs"`
	// Parts are the measured parts, in the path's order (client first).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Parts []BudgetPart `json:"parts,omitempty"`
	// UnattributedMs is the round trip's rest: no measured part's thread was on a CPU nor waiting
	// for one for it.
	UnattributedMs float64 `json:"unattributedMs"`
}

// BudgetPart is one part's share of a transaction's round trip.
type BudgetPart struct {
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// Ms is its time per transaction: OnCPUMs, WaitedMs and HeldMs together; for the emulated
	// link, whose threads work inside its holds (its precise sleep ends on a CPU), the larger of
	// HeldMs and its threads' time.
	Ms float64 `json:"ms"`
	// OnCPUMs is its threads' time on a CPU per transaction, WaitedMs their time runnable but
	// waiting for one (the node's other parts held the cores).
	OnCPUMs  float64 `json:"onCPUMs"`
	WaitedMs float64 `json:"waitedMs"`
	// HeldMs is the time the part held each transaction, as it counted it itself: an emulated
	// link's delay (per connection, the time any of its data was held; an SSH tunnel's one
	// connection carries several transactions at once and is counted once for them), a PgBouncer's
	// queue for a server connection (SHOW STATS' total_wait_time).
	// +optional
	HeldMs float64 `json:"heldMs,omitempty"`
	// Threads are the threads it had at the window's end.
	Threads int32 `json:"threads"`
	// BusiestThreadCores is the most one of its threads was on a CPU, over the window's length: 1
	// is a full core, the most a single-threaded part (ssh, sshd, PgBouncer) can use.
	BusiestThreadCores float64 `json:"busiestThreadCores"`
}

// WireCost is the bytes a run put on the network from the runner's pod (loopback aside), read from
// the pod's interface counters at the ends of the measured window.
type WireCost struct {
	ReceivedBytes int64 `json:"receivedBytes"`
	SentBytes     int64 `json:"sentBytes"`
	// BytesPerTransaction is both directions' bytes per transaction the run completed.
	// +optional
	BytesPerTransaction *float64 `json:"bytesPerTransaction,omitempty"`
	// BytesPerRow is both directions' bytes per row of a copy run.
	// +optional
	BytesPerRow *float64 `json:"bytesPerRow,omitempty"`
}

// ConnectionSetup is the median time of each phase of a new connection through the path, over
// Probes connections the runner opened after the measured window (the path as the load left it:
// a pooler's server connections open).
type ConnectionSetup struct {
	Probes int32 `json:"probes"`
	// ResolveMs is the host name's resolution (a Service's DNS name; nothing for an address).
	ResolveMs float64 `json:"resolveMs"`
	// TCPMs is the TCP connection to the path's first hop: the server, or a tunnel's or a sidecar
	// pooler's loopback end (whose own connection onward comes later, in the startup).
	TCPMs float64 `json:"tcpMs"`
	// TLSMs is PostgreSQL's SSLRequest and the TLS handshake; about 0 without TLS.
	TLSMs float64 `json:"tlsMs"`
	// StartupMs is the rest: the startup message, authentication (SCRAM, md5, trust, a
	// certificate), the backend's start; through a pooler, its login; through a tunnel, the
	// tunnel's connection onward.
	StartupMs float64 `json:"startupMs"`
	// TotalMs is the whole connection's median.
	TotalMs float64 `json:"totalMs"`
}

// UnmeasuredPart is a part of the path whose CPU over a run's window is not known, and why.
type UnmeasuredPart struct {
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason"`
}

// PartCost is what one part of the path consumed during a run's measured window.
type PartCost struct {
	// Part names it: client (pgbench and the runner).
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// CPUSeconds is its CPU time, user and system, over the window.
	CPUSeconds float64 `json:"cpuSeconds"`
	// CPUMicrosPerTransaction is CPUSeconds per transaction the run completed, in microseconds.
	// +optional
	CPUMicrosPerTransaction *float64 `json:"cpuMicrosPerTransaction,omitempty"`
	// Cores is the CPU it could use: its CPU limit, else its node's allocatable CPU.
	// +optional
	Cores *float64 `json:"cores,omitempty"`
	// Utilization is CPUSeconds over the window's length times Cores: 1 is all it could use.
	// +optional
	Utilization *float64 `json:"utilization,omitempty"`
	// ThrottledFraction is the share of the scheduler's periods under its CPU limit in which it
	// ran out of its quota, and ThrottledSeconds how long it waited; both only under a limit.
	// +optional
	ThrottledFraction *float64 `json:"throttledFraction,omitempty"`
	// +optional
	ThrottledSeconds *float64 `json:"throttledSeconds,omitempty"`
}

// Limiter is the part of the path that ran out during a run.
type Limiter struct {
	// Part is the part's name, as in cost.
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// Evidence says which figure crossed which threshold.
	// +kubebuilder:validation:MaxLength=1024
	Evidence string `json:"evidence"`
}

// TransportResult is what pgbench measured through one transport.
type TransportResult struct {
	// Transport is the transport's name.
	Transport string `json:"transport"`
	// Point is the swept parameter's value this result was measured at (status.sweep.parameter);
	// 0 without a sweep. Each transport has one result per point, compared with the baseline's at
	// the same point.
	// +kubebuilder:default=0
	// +optional
	Point int32 `json:"point,omitempty"`
	// Type is the transport's type.
	Type TransportType `json:"type"`
	// Job is the name of the Job that ran pgbench.
	Job string `json:"job"`

	// Runs holds each repetition's own figures, in the order they ran.
	// +optional
	Runs []RunResult `json:"runs,omitempty"`
	// Repetitions counts the runs done, of spec.load.repetitions.
	Repetitions int32 `json:"repetitions"`

	// TPS is the median over the repetitions of transactions per second as pgbench reports it:
	// without the initial connection time, or, with spec.load.reconnect, including the
	// reconnection times (pgbench 14+ reports nothing else in that mode).
	TPS float64 `json:"tps"`
	// TPSSpread is how tps varied over the repetitions.
	// +optional
	TPSSpread *Spread `json:"tpsSpread,omitempty"`
	// LatencySpread is how the average latency (milliseconds) varied over the repetitions.
	// +optional
	LatencySpread *Spread `json:"latencySpread,omitempty"`
	// Comparison is this transport's tps against the baseline's, with its interval and verdict.
	// +optional
	Comparison *Comparison `json:"comparison,omitempty"`
	// Latency is the distribution of transaction latencies over every repetition: the runs' HDR
	// histograms (from pgbench's transaction logs) merged, never averaged.
	// +optional
	Latency *LatencyDistribution `json:"latency,omitempty"`
	// Link is the transport's emulated link, asked and measured.
	// +optional
	Link *LinkResult `json:"link,omitempty"`
	// Series is tps over time, per run, from pgbench's progress reports: at most 120 points per
	// transport, each the mean of consecutive intervals when a run reported more.
	// +optional
	Series []RunSeries `json:"series,omitempty"`
	// TPSIncludingConnections is tps including connection time; only set when pgbench printed it
	// (with spec.load.reconnect).
	// +optional
	TPSIncludingConnections *float64 `json:"tpsIncludingConnections,omitempty"`
	// LatencyAvgMs is the median over the repetitions of the average transaction latency in
	// milliseconds.
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// LatencyStddevMs is the latest run's latency standard deviation in milliseconds.
	// +optional
	LatencyStddevMs *float64 `json:"latencyStddevMs,omitempty"`
	// ConnectionTimeMs is the runs' median of pgbench's initial connection time in milliseconds:
	// every client connecting before the load (the clients' start-up, not one connection's cost;
	// see runs[].setup, connectionStorm or spec.load.reconnect), or with spec.load.reconnect the
	// average time to open one connection.
	ConnectionTimeMs float64 `json:"connectionTimeMs"`
	// Transactions actually processed, over all repetitions.
	Transactions int64 `json:"transactions"`
	// FailedTransactions counts transactions that ended in an error, over all repetitions.
	FailedTransactions int64 `json:"failedTransactions"`

	// TLS is what the runner's own session negotiated with the server, read from pg_stat_ssl.
	// +optional
	TLS *NegotiatedTLS `json:"tls,omitempty"`

	// SSH is what the tunnels negotiated with the gateway, read from ssh's own verbose log.
	// +optional
	SSH *NegotiatedSSH `json:"ssh,omitempty"`

	// Tunnels holds each tunnel's own figures when the transport ran several.
	// +optional
	Tunnels []TunnelResult `json:"tunnels,omitempty"`

	// ConnectionsPerSecond, with spec.load.reconnect, is how many connections pgbench opened per
	// second: one per transaction, failed ones included.
	// +optional
	ConnectionsPerSecond *float64 `json:"connectionsPerSecond,omitempty"`

	// ConnectionStorm is the result of spec.load.connectionStorm.
	// +optional
	ConnectionStorm *ConnectionStormResult `json:"connectionStorm,omitempty"`

	// Copy is the result of a copy load (spec.load.copy); tps and latency are then zero.
	// +optional
	Copy *CopyResult `json:"copy,omitempty"`

	// Pooler describes both hops of a pooler transport and what the pooler counted.
	// +optional
	Pooler *PoolerResult `json:"pooler,omitempty"`

	// Path says in a few words what the path negotiated and how it was built, as its transport
	// describes the recorded result: the summary and the plugin print it.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`

	// Evidence is what the path's own parts counted while the load ran (a tunnel's bytes and
	// handshakes, a proxy's sessions), as its transport reads them.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Evidence []Evidence `json:"evidence,omitempty"`

	// Command is the pgbench command line that ran. Connection settings come from libpq
	// environment variables; the password never appears here.
	Command string `json:"command"`
	// Executed is the latest run's pgbench processes exactly as the runner started them (of the
	// first runner pod, with several), with the flags it adds to Command: the transaction log and
	// its sampling rate, one process per tunnel with its port; "; " between processes.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Executed string `json:"executed,omitempty"`
	// Connection is the libpq connection string used, without user or password.
	Connection string `json:"connection"`

	// Unguarded marks a run of a benchmark with spec.exclusive false: other benchmarks of the
	// same server may have run at the same time and disturbed it.
	// +optional
	Unguarded bool `json:"unguarded,omitempty"`

	// Provenance is where and with what the run was measured, as observed.
	// +optional
	Provenance *Provenance `json:"provenance,omitempty"`

	// StartTime is when the first repetition's measured run started, EndTime when the latest
	// ended.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}

// Provenance records what really ran a transport's measurement.
type Provenance struct {
	// Node is the node the runner pod ran on.
	Node string `json:"node,omitempty"`
	// ServerNode is the node of the server's pod (the primary of a CloudNativePG cluster) when
	// the operator can know it; empty for an external server.
	ServerNode string `json:"serverNode,omitempty"`
	// SharedNode is true when the runner and the server ran on one node: the client then takes
	// CPU from the server it measures. Unset when the server's node is unknown.
	// +optional
	SharedNode *bool `json:"sharedNode,omitempty"`
	// RunnerImage is the runner container's image as the kubelet reports it (with its digest).
	RunnerImage string `json:"runnerImage,omitempty"`
	// PgbenchVersion is `pgbench --version` in the runner.
	PgbenchVersion string `json:"pgbenchVersion,omitempty"`
	// CPURequest and MemoryLimit are the runner container's resources.
	CPURequest  string `json:"cpuRequest,omitempty"`
	MemoryLimit string `json:"memoryLimit,omitempty"`
}

// NegotiatedTLS is the TLS session the server reports for the runner's connection.
type NegotiatedTLS struct {
	// Version is the protocol version, e.g. TLSv1.3.
	Version string `json:"version"`
	// Cipher is the negotiated cipher suite.
	Cipher string `json:"cipher"`
}

// Evidence is one thing a part of the path counted or negotiated, in words.
type Evidence struct {
	// Name is what it is: "wireguard handshake", "tunnel bytes".
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Value is what it was.
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
}

// NegotiatedSSH is the SSH session ssh reports ("kex: client->server ...").
type NegotiatedSSH struct {
	Cipher      string `json:"cipher"`
	MAC         string `json:"mac"`
	Compression string `json:"compression"`
	// ClientVersion and ServerVersion are ssh's and the gateway sshd's software versions as they
	// announced them to each other, e.g. "OpenSSH_9.2p1 Debian-2+deb12u3".
	// +optional
	ClientVersion string `json:"clientVersion,omitempty"`
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`
}

// ConnectionStormResult is what N sequential connect, select 1, disconnect cycles cost.
type ConnectionStormResult struct {
	// Connections opened (successfully).
	Connections int64 `json:"connections"`
	// TotalSeconds is the time the whole storm took.
	TotalSeconds float64 `json:"totalSeconds"`
	// ConnectionsPerSecond is connections divided by the total time.
	ConnectionsPerSecond float64 `json:"connectionsPerSecond"`
	// MeanConnectionMs is the mean time one cycle took: connect, select 1, disconnect.
	MeanConnectionMs float64 `json:"meanConnectionMs"`
	// MeanConnectMs is the mean time to open a connection, as pgbench measures it.
	MeanConnectMs float64 `json:"meanConnectMs"`
	// FailedConnections counts cycles that failed.
	FailedConnections int64 `json:"failedConnections"`
	// Command is the pgbench command line that ran.
	Command string `json:"command"`
	// Connect is the time to open a connection with its uncertainty from this one run: the storm
	// runs as batches one after the other (each its own pgbench), and this is the median of
	// their mean connect times with its distribution-free interval.
	// +optional
	Connect *MedianInterval `json:"connect,omitempty"`
}

// MedianInterval is a median with a distribution-free interval around it.
type MedianInterval struct {
	// Median, Low and High are in the figure's unit (milliseconds for a time).
	Median float64 `json:"median"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	// Confidence is the interval's coverage: 1 - 2/2^n for the min–max of n values.
	Confidence float64 `json:"confidence"`
	// Samples is how many values the interval is made of.
	Samples int32 `json:"samples"`
}

// PoolerResult records how a pooler transport was set up and what the pooler saw.
type PoolerResult struct {
	// Implementation is "PgBouncer" (the operator's own), "CloudNativePG Pooler" or
	// "TunnelBench mysqlpool" (the MySQL pooler).
	Implementation string `json:"implementation"`
	// Placement is service or sidecar.
	Placement PoolerPlacement `json:"placement"`
	// PoolMode is session or transaction.
	PoolMode PoolMode `json:"poolMode"`
	// ClientHop is pgbench to pooler.
	ClientHop Hop `json:"clientHop"`
	// ServerHop is pooler to server.
	ServerHop Hop `json:"serverHop"`
	// Transactions is how many transactions the pooler's SHOW STATS counted during the latest run (the
	// MySQL pooler's: how many times it lent a server connection, for a statement or a
	// transaction): the evidence that the traffic went through it. Not available for a
	// CloudNativePG Pooler.
	// +optional
	Transactions *int64 `json:"transactions,omitempty"`
	// Version is the pooler's version as its admin console reports it (SHOW VERSION), e.g.
	// "PgBouncer 1.18.0"; unknown for a CloudNativePG Pooler.
	// +optional
	Version string `json:"version,omitempty"`
	// ServerConnections is how many connections to the server the pooler held at the end of the
	// latest run (SHOW SERVERS); for the MySQL pooler, how many it opened during the run.
	// +optional
	ServerConnections *int32 `json:"serverConnections,omitempty"`
}

// Hop is one hop of a pooled path.
type Hop struct {
	// Auth is how the connecting side authenticates on this hop: scram-sha-256, trust, password
	// (PgBouncer answers the server's challenge, SCRAM or MD5 as the server's pg_hba.conf asks,
	// with the password from the credentials Secret) or cert.
	Auth string `json:"auth"`
	// TLS is the negotiated protocol and cipher, e.g. "TLSv1.3/TLS_AES_256_GCM_SHA384", or
	// "none" for plain TCP.
	TLS string `json:"tls"`
}

// TunnelResult is one tunnel's pgbench figures.
type TunnelResult struct {
	Tunnel             int32   `json:"tunnel"`
	TPS                float64 `json:"tps"`
	LatencyAvgMs       float64 `json:"latencyAvgMs"`
	Transactions       int64   `json:"transactions"`
	FailedTransactions int64   `json:"failedTransactions"`
}
