package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SweepSpec is the one parameter a benchmark sweeps, and its values. Every round runs every
// (point, transport) once, in its own random order, so that drift falls on every point alike and
// round i of one point pairs with round i of the next (the curve's gains are paired).
// +kubebuilder:validation:XValidation:rule="[has(self.clients), has(self.tunnels), has(self.poolSize)].filter(x, x).size() == 1",message="spec.sweep: set exactly one of clients, tunnels or poolSize"
type SweepSpec struct {
	// Clients are the values of pgbench -c, in increasing order; spec.load.clients does not apply,
	// and threads at a point are the fewer of spec.load.threads and its clients.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1000
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="spec.sweep.clients must be in increasing order"
	// +listType=set
	// +optional
	Clients []int32 `json:"clients,omitempty"`

	// Tunnels are the values of ssh.tunnels of every ssh transport, in increasing order (each
	// transport's own ssh.tunnels does not apply); the other transports are measured at every
	// point alike, as references.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=32
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="spec.sweep.tunnels must be in increasing order"
	// +listType=set
	// +optional
	Tunnels []int32 `json:"tunnels,omitempty"`

	// PoolSize are the values of pooler.poolSize (PgBouncer's default_pool_size, the MySQL
	// pooler's server connections) of every pooler transport, in increasing order; each pooler
	// must be a sidecar (placement sidecar), which starts with each run, so that each point's runs
	// meet a pooler of the point's size.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="spec.sweep.poolSize must be in increasing order"
	// +listType=set
	// +optional
	PoolSize []int32 `json:"poolSize,omitempty"`
}

// SweepParameter is what a sweep varies.
// +kubebuilder:validation:Enum=clients;tunnels;poolSize
type SweepParameter string

// Parameters a sweep may vary.
const (
	SweepClients  SweepParameter = "clients"
	SweepTunnels  SweepParameter = "tunnels"
	SweepPoolSize SweepParameter = "poolSize"
)

// BuiltinScript is one of the load generator's built-in tests: pgbench's scripts for PostgreSQL,
// sysbench's OLTP tests for MySQL.
// +kubebuilder:validation:Enum=select-only;tpcb-like;simple-update;oltp_point_select;oltp_read_only;oltp_read_write;oltp_write_only;oltp_update_index;oltp_update_non_index;oltp_insert;oltp_delete;select_random_points;select_random_ranges
type BuiltinScript string

// Protocol is pgbench's query mode (-M).
// +kubebuilder:validation:Enum=simple;extended;prepared
type Protocol string

// RunOrder is the order in which repetitions of the transports run.
// +kubebuilder:validation:Enum=interleaved;sequential
type RunOrder string

const (
	// OrderInterleaved runs the transports round-robin: A B C, A B C, ...
	OrderInterleaved RunOrder = "interleaved"
	// OrderSequential runs every repetition of a transport before the next: A A A, B B B, ...
	OrderSequential RunOrder = "sequential"
)

// LoadSpec is the pgbench workload.
// +kubebuilder:validation:XValidation:rule="[has(self.builtin), has(self.script), has(self.copy)].filter(x, x).size() == 1",message="spec.load: exactly one of builtin, script or copy must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.copy) || (has(self.initialize) && self.initialize)",message="spec.load.copy needs spec.load.initialize: true: the initialization creates the data set on the server, over a direct connection"
// +kubebuilder:validation:XValidation:rule="!has(self.copy) || (!(has(self.reconnect) && self.reconnect) && !has(self.connectionStorm) && !has(self.transactions) && !has(self.rate) && !has(self.latencyLimit))",message="spec.load.copy: reconnect, connectionStorm, transactions, rate and latencyLimit apply to pgbench loads only"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || !has(self.repetitions) || self.repetitions >= 4",message="spec.load.precision needs spec.load.repetitions of at least 4: they are the most rounds, and the first look is after round 3"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || !has(self.order) || self.order != 'sequential'",message="spec.load.precision needs interleaved runs (spec.load.order): each round is a look at paired comparisons"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || !has(self.connectionStorm)",message="spec.load.precision does not combine with spec.load.connectionStorm: a storm runs after the last round, which a precision target does not know in advance"
// +kubebuilder:validation:XValidation:rule="!(has(self.duration) && has(self.transactions))",message="spec.load: duration and transactions are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!has(self.stallTimeout) || !has(self.progressInterval) || duration(self.stallTimeout).getSeconds() >= 2 * duration(self.progressInterval).getSeconds()",message="spec.load.stallTimeout must be at least twice spec.load.progressInterval: a stall is judged from pgbench's progress reports"
type LoadSpec struct {
	// Builtin is one of the load generator's built-in tests: select-only, tpcb-like or
	// simple-update (pgbench) for PostgreSQL; oltp_point_select, oltp_read_only, oltp_read_write,
	// oltp_write_only, oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete,
	// select_random_points or select_random_ranges (sysbench, on a table of 100,000 rows per
	// spec.load.scale) for MySQL.
	// +optional
	Builtin BuiltinScript `json:"builtin,omitempty"`

	// Script is an inline pgbench script (SQL and pgbench meta-commands), such as "select 1;".
	// pgbench's \shell and \setshell are refused in every spelling pgbench reads (ShellMetaCommand):
	// they would run commands in the runner, whose environment holds the server's password, so
	// anyone allowed to create a benchmark could read a Secret they may not get themselves.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'(?i)\\\\(?:[ \\t\\r\\f\\v]|\\\\\\r?\\n)*(?:set)?shell')",message="spec.load.script must not use pgbench's \\shell or \\setshell in any spelling (a backslash, spaces or continuations, then shell or setshell in any case): they run commands in the runner, next to the server's password"
	// +optional
	Script string `json:"script,omitempty"`

	// Clients is the number of concurrent database sessions (pgbench -c). At most 1000: each is a
	// server backend, and PostgreSQL's default max_connections is 100; for a managed server,
	// clients must leave superuser_reserved_connections (3) of its max_connections free.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Clients int32 `json:"clients,omitempty"`

	// Threads is the number of pgbench worker threads (pgbench -j).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Threads int32 `json:"threads,omitempty"`

	// Duration of each transport's run (pgbench -T). When neither duration nor transactions is
	// set, each run lasts 60s.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="spec.load.duration must be between 1s and 24h"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Transactions per client (pgbench -t), instead of a duration. At most 10,000,000 per
	// client: the run must end within spec.timeout, which a duration bounds but a count does not.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	Transactions *int32 `json:"transactions,omitempty"`

	// Protocol is the query protocol (pgbench -M).
	// +kubebuilder:default=simple
	// +optional
	Protocol Protocol `json:"protocol,omitempty"`

	// Reconnect opens a new connection for every transaction (pgbench -C), to measure connection
	// cost: TLS and authentication handshakes are paid per transaction.
	// +optional
	Reconnect bool `json:"reconnect,omitempty"`

	// Rate runs the load open-loop: pgbench schedules this many transactions per second for the
	// whole run, across all clients (pgbench -R; split evenly across SSH tunnels), and each
	// transaction's latency counts from its scheduled start, so a stall of the path delays every
	// transaction scheduled behind it instead of the few in flight (closed loop's coordinated
	// omission). Every path then runs the same number of transactions per second and tps says
	// nothing of it: an open-loop benchmark compares the paths by their mean latency (schedule lag
	// included). Choose it for tail latency, and over a WAN, where closed-loop tps is only clients
	// over the round trip; the rate must be one every path sustains (a run that skips more than
	// 1 % of its schedule takes no part in the comparisons).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	Rate *int32 `json:"rate,omitempty"`

	// LatencyLimit counts transactions that last longer as late (pgbench -L); with rate, a
	// transaction already this far behind its schedule is skipped rather than run, and counted.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('100us') && duration(self) <= duration('1h')",message="spec.load.latencyLimit must be between 100us and 1h"
	// +optional
	LatencyLimit *metav1.Duration `json:"latencyLimit,omitempty"`

	// ConnectionStorm, after the load, opens N connections one after the other from one client,
	// each running `select 1` and disconnecting (pgbench -C -c 1 -t N; on MySQL the runner's own
	// driver, since sysbench 1.0.20 opens no connection per transaction), and reports the total
	// time, connections per second and mean time per connection. With repetitions, it runs after
	// each transport's last round (at each sweep point) only.
	// +optional
	ConnectionStorm *ConnectionStorm `json:"connectionStorm,omitempty"`

	// Copy, instead of a pgbench script, moves a data set through every transport: one COPY per
	// run, measured in MB/s and rows/s (needs initialize: true, which creates the data set).
	// Clients, threads, protocol and warmup do not apply; duration bounds nothing (a copy runs
	// until done, within spec.timeout).
	// +optional
	Copy *CopyLoad `json:"copy,omitempty"`

	// Scale is the scale factor for initialization (pgbench -i -s): about 16 MB on the server per
	// unit (100,000 pgbench_accounts rows and their index). At most 10000 (about 160 GB); a
	// managed server's storageSize must hold it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Scale int32 `json:"scale,omitempty"`

	// Initialize runs `pgbench -i` once before the transports, over a direct connection. It drops
	// and re-creates the pgbench_* tables, so it is off unless asked for.
	// +optional
	Initialize bool `json:"initialize,omitempty"`

	// Repetitions is how many times each transport is measured. Every figure in status is a
	// summary of the repetitions (the median, with min, max and coefficient of variation), and
	// each transport's ratio to the first one comes with a 95 % confidence interval from the
	// paired repetitions. The default, 3, is the fewest that give an interval (one repetition
	// gives none, and with two Student's t is 12.7, an interval too wide to decide anything) at
	// three times the time of a single run; raise it when the verdicts say "indistinguishable"
	// and the difference matters.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`

	// Precision, when set, makes repetitions the most rounds: the benchmark stops after the first
	// round (from the third) at which its comparisons meet the goal (status.precision). It needs
	// interleaved runs (a round is a look), at least 4 repetitions, and no connectionStorm (a storm
	// runs after the last round, which a target does not know in advance).
	// +optional
	Precision *PrecisionTarget `json:"precision,omitempty"`

	// Order of the runs: interleaved (the default) runs round 1 of every transport, then round 2,
	// and so on, each round in its own random order (seeded: see seed), so that whatever drifts on
	// the machine (other workloads, caches, table bloat under a write load) hits every transport
	// alike and no transport always runs first or last; round i of a transport is then compared
	// with round i of the baseline (paired). Sequential runs all repetitions of a transport before
	// the next, the transports in a random order; drift between transports then does not cancel,
	// so their runs are compared unpaired (Welch), with wider intervals, and a drift of the machine
	// can still make a verdict: prefer interleaved. Peers (an SSH gateway, poolers) stay up
	// between the rounds of an interleaved benchmark.
	// +kubebuilder:default=interleaved
	// +optional
	Order RunOrder `json:"order,omitempty"`

	// Seed of the random run order. When unset it is derived from the benchmark's UID, so every
	// benchmark gets its own order; status.runOrder records the seed and the order that ran, and
	// setting the same seed (with the same transports and repetitions) runs the same order again.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	// +optional
	Seed *int64 `json:"seed,omitempty"`

	// Warmup is a pgbench run of this length before each measured run, through the same path and
	// pod, whose figures are discarded: it fills the server's and the path's caches and opens the
	// tunnels. 0s skips it.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('1h')",message="spec.load.warmup must be between 0s and 1h"
	// +optional
	Warmup *metav1.Duration `json:"warmup,omitempty"`

	// StallTimeout fails a run in which no transaction completes for this long (reason Stalled),
	// judged from pgbench's progress reports: a partitioned network, a server that hangs or a
	// path that lost its peer leaves pgbench waiting on its sockets, where no error would come
	// before spec.timeout. Raise it for scripts whose transactions last longer.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s') && duration(self) <= duration('1h')",message="spec.load.stallTimeout must be between 5s and 1h"
	// +optional
	StallTimeout *metav1.Duration `json:"stallTimeout,omitempty"`

	// ProgressInterval is pgbench's progress report interval (-P), in whole seconds.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="spec.load.progressInterval must be at least 1s"
	// +optional
	ProgressInterval *metav1.Duration `json:"progressInterval,omitempty"`
}

// ConnectionStorm is a sequential connect, select 1, disconnect loop.
type ConnectionStorm struct {
	// Connections is how many connections to open, one after the other. At most 100000: each
	// one is a fork of a server backend and an authentication, and on a 2-core server a storm
	// opens about a thousand a second, so 100000 already lasts minutes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	Connections int32 `json:"connections"`
}

// RunnerSpec configures the pods that run pgbench. Where the client runs matters: place it with
// nodeSelector, tolerations and affinity.
type RunnerSpec struct {
	// Image runs the TunnelBench runner and pgbench. Defaults to the operator's configured image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// ImagePullPolicy for the runner image.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// Resources of the runner container. When omitted the runner requests 500m CPU and 128Mi of
	// memory: a BestEffort pod gets almost no CPU share under load and would measure the
	// scheduler, not the path. No CPU limit is set by default, since CFS throttling distorts latency.
	// A request above its limit is refused here, at apply, rather than by the Job's pod later.
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ['cpu', 'memory'].all(r, !(r in self.requests) || !(r in self.limits) || quantity(string(self.requests[r])).compareTo(quantity(string(self.limits[r]))) <= 0)",message="spec.runner.resources: a request (cpu or memory) must not exceed its limit"
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector for the runner pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations for the runner pods.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity for the runner pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Pods runs each measured run as this many runner pods (an Indexed Job), the clients and
	// threads split evenly across them, each with its own copy of the transport's client side
	// (tunnels, a sidecar pooler, the link proxy). Every pod connects and warms up first; the
	// operator then starts their measured loads at one moment, and the run's figures are their sum
	// (tps, transactions) and merge (latency histograms), with each pod's own in status. Default 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	Pods int32 `json:"pods,omitempty"`

	// TopologySpreadConstraints of the runner pods. With several pods and neither these nor an
	// affinity set, they are spread across nodes where the scheduler can (kubernetes.io/hostname,
	// ScheduleAnyway).
	// +kubebuilder:validation:MaxItems=8
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
}
