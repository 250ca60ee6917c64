package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Labels put on every object the operator creates for a benchmark.
const (
	LabelBenchmark = "tunnelbench.io/benchmark"
	// LabelBenchmarkUID marks what cert-manager writes for a benchmark (the Secrets of its
	// Certificates, which carry no owner reference): the operator removes only what carries it.
	LabelBenchmarkUID = "tunnelbench.io/benchmark-uid"
	// LabelTransport is set on objects that serve one transport and go when its run ends; objects
	// the whole benchmark shares (the SSH gateway, a managed server) do not carry it.
	LabelTransport = "tunnelbench.io/transport"
	// LabelRound is the repetition a runner Job measures, from 1.
	LabelRound = "tunnelbench.io/round"
	// LabelPoint is the value of the sweep's parameter a runner Job measures.
	LabelPoint     = "tunnelbench.io/point"
	LabelComponent = "app.kubernetes.io/component"
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"

	// InitTransportLabel is the transport label value of the `pgbench -i` Job.
	InitTransportLabel = "init"

	// CleanupFinalizer holds a benchmark until the operator removed what garbage collection would
	// leave of it (controllers.needsCleanup); the uninstall hook releases it too.
	CleanupFinalizer = "bench.tunnelbench.io/cleanup"
)

// maxNameLength keeps derived names usable as label values and as Service names (DNS labels):
// the Job controller copies a Job's name into the batch.kubernetes.io/job-name label of its pods.
const maxNameLength = 63

// nameHashLength is the hex digits of the hash every derived name ends with.
const nameHashLength = 6

// Roles of derived names: what the named object is for a transport (or the benchmark).
const (
	roleJob           = "job"
	roleGateway       = "ssh-gateway"
	rolePooler        = "pooler"
	rolePoolerMetrics = "pooler-metrics"
	roleClientCert    = "client-cert"
	roleRunner        = "runner"
)

// ObjectName derives the name of an object the operator makes for this benchmark: readable (the
// benchmark's name, the transport's, the role) and ending in a hash of the three. Benchmark and
// transport names may both contain dashes, so "a" with transport "b-c" and "a-b" with transport
// "c" would otherwise meet at "a-b-c"; the hash, taken over the parts joined by a character no
// DNS label holds, keeps them apart, and keeps over-long names unique once truncated.
func (tb *TunnelBenchmark) ObjectName(role, transport string) string {
	readable := []string{tb.Name}
	if transport != "" {
		readable = append(readable, transport)
	}
	if role != roleJob {
		readable = append(readable, role)
	}
	return hashed(strings.Join(readable, "-"), tb.Name+"/"+role+"/"+transport, nameHashLength, maxNameLength)
}

// hashed is readable followed by a hash of key, truncated so that the whole fits in maxLen: the
// one naming scheme of everything the operator makes.
func hashed(readable, key string, hashLen, maxLen int) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLen]
	if len(readable)+len(suffix) > maxLen {
		readable = strings.TrimRight(readable[:maxLen-len(suffix)], "-")
	}
	return readable + suffix
}

// BoundedName is name itself when it fits a DNS label (and a label value), otherwise its
// beginning followed by a hash of all of it: for names made of a derived name and a suffix, such
// as a Job's NetworkChaos objects or a managed cluster's server certificate, which other
// controllers (chaos-mesh, cert-manager) copy into label values.
func BoundedName(name string) string {
	if len(name) <= maxNameLength {
		return name
	}
	return hashed(name, name, nameHashLength, maxNameLength)
}

// JobName is the deterministic name of the Job that runs one transport (InitTransportLabel for
// the initialization Job). Deterministic names make creation idempotent across operator restarts.
func (tb *TunnelBenchmark) JobName(transport string) string {
	return tb.ObjectName(roleJob, transport)
}

// RunJobName is the deterministic name of the Job that runs one measured run: a repetition
// (round, from 1) of a transport, at a sweep's point ("-c16" for clients 16) when there is one.
func (tb *TunnelBenchmark) RunJobName(ref RunRef) string {
	param, values := tb.Spec.Sweep.Parameter()
	if param == "" {
		return hashed(fmt.Sprintf("%s-%s-r%d", tb.Name, ref.Transport, ref.Round),
			fmt.Sprintf("%s/%s/%s/%d", tb.Name, roleJob, ref.Transport, ref.Round), nameHashLength, maxNameLength)
	}
	value := values[ref.Point]
	return hashed(fmt.Sprintf("%s-%s-%c%d-r%d", tb.Name, ref.Transport, param[0], value, ref.Round),
		fmt.Sprintf("%s/%s/%s/%s=%d/%d", tb.Name, roleJob, ref.Transport, param, value, ref.Round), nameHashLength, maxNameLength)
}

// RunRef addresses one measured run of a benchmark: a round (from 1) of a transport at a sweep's
// point (its index in the sweep's values; 0 without a sweep).
// +kubebuilder:object:generate=false
type RunRef struct {
	Transport string
	Point     int
	Round     int32
}

// Parameter is what the sweep varies and its values; "" and nil for no sweep (a nil receiver).
func (s *SweepSpec) Parameter() (SweepParameter, []int32) {
	switch {
	case s == nil:
		return "", nil
	case len(s.Clients) > 0:
		return SweepClients, s.Clients
	case len(s.Tunnels) > 0:
		return SweepTunnels, s.Tunnels
	case len(s.PoolSize) > 0:
		return SweepPoolSize, s.PoolSize
	}
	return "", nil
}

// Points is how many points the benchmark measures: the sweep's values, or 1 without a sweep.
func (tb *TunnelBenchmark) Points() int {
	if _, values := tb.Spec.Sweep.Parameter(); len(values) > 0 {
		return len(values)
	}
	return 1
}

// PointName says which point of the sweep a run measures, e.g. "clients=16"; "" without a sweep.
func (tb *TunnelBenchmark) PointName(point int) string {
	param, values := tb.Spec.Sweep.Parameter()
	if param == "" || point < 0 || point >= len(values) {
		return ""
	}
	return fmt.Sprintf("%s=%d", param, values[point])
}

// AtPoint is the benchmark as it runs at a sweep's point: a copy whose load (clients, and threads
// no more than clients), ssh transports (tunnels) or pooler transports (poolSize) carry the
// point's value, and no sweep, so that
// whatever builds a run from a spec builds the point's. The benchmark itself without a sweep.
func (tb *TunnelBenchmark) AtPoint(point int) *TunnelBenchmark {
	param, values := tb.Spec.Sweep.Parameter()
	if param == "" {
		return tb
	}
	out := tb.DeepCopy()
	out.Spec.Sweep = nil
	value := values[point]
	switch param {
	case SweepClients:
		out.Spec.Load.Clients = value
		out.Spec.Load.Threads = min(max(out.Spec.Load.Threads, DefaultThreads), value)
	case SweepTunnels:
		for i := range out.Spec.Transports {
			t := &out.Spec.Transports[i]
			if t.Type == TransportSSH {
				if t.SSH == nil {
					t.SSH = &SSHTransport{}
				}
				t.SSH.Tunnels = value
			}
		}
	case SweepPoolSize:
		for i := range out.Spec.Transports {
			t := &out.Spec.Transports[i]
			if t.Type == TransportPooler {
				if t.Pooler == nil {
					t.Pooler = &PoolerTransport{}
				}
				t.Pooler.PoolSize = value
			}
		}
	}
	return out
}

// InitSweep makes status.sweep, with every point, for a swept benchmark that has none yet.
func (tb *TunnelBenchmark) InitSweep() {
	param, values := tb.Spec.Sweep.Parameter()
	if param == "" || (tb.Status.Sweep != nil && len(tb.Status.Sweep.Points) == len(values)) {
		return
	}
	sweep := &SweepStatus{Parameter: param}
	for _, v := range values {
		sweep.Points = append(sweep.Points, SweepPoint{Value: v})
	}
	tb.Status.Sweep = sweep
}

// PointValue is the value a point (an index of the sweep's values) gives results[].point: the
// swept parameter's value, 0 without a sweep.
func (tb *TunnelBenchmark) PointValue(point int) int32 {
	if _, values := tb.Spec.Sweep.Parameter(); point < len(values) {
		return values[point]
	}
	return 0
}

// resultOrder is where a result sits in status.results: its point's place in the sweep, then its
// transport's in the spec (unknown ones last).
func (tb *TunnelBenchmark) resultOrder(r *TransportResult) (int, int) {
	point, transport := 0, len(tb.Spec.Transports)
	if _, values := tb.Spec.Sweep.Parameter(); len(values) > 0 {
		point = len(values)
		if i := slices.Index(values, r.Point); i >= 0 {
			point = i
		}
	}
	for i := range tb.Spec.Transports {
		if tb.Spec.Transports[i].Name == r.Transport {
			transport = i
			break
		}
	}
	return point, transport
}

// ResultFor is the result of transport t at a point, added in its place when missing: a point's
// results are contiguous in status.results, which ResultsAt relies on. The pointer holds until
// the next ResultFor.
func (tb *TunnelBenchmark) ResultFor(point int, t TransportSpec) *TransportResult {
	value := tb.PointValue(point)
	for i := range tb.Status.Results {
		if r := &tb.Status.Results[i]; r.Point == value && r.Transport == t.Name {
			return r
		}
	}
	added := TransportResult{Transport: t.Name, Type: t.Type, Point: value}
	p, n := tb.resultOrder(&added)
	at := len(tb.Status.Results)
	for i := range tb.Status.Results {
		if q, m := tb.resultOrder(&tb.Status.Results[i]); q > p || (q == p && m > n) {
			at = i
			break
		}
	}
	tb.Status.Results = slices.Insert(tb.Status.Results, at, added)
	return &tb.Status.Results[at]
}

// ResultsAt is the results of a point as stored: status.results without a sweep, the point's
// window of them otherwise (nil while there are none). The window shares status.results' entries,
// so that a point's comparisons are written in place; results stored out of order (never by
// ResultFor) are returned as a copy.
func (tb *TunnelBenchmark) ResultsAt(point int) []TransportResult {
	if tb.Spec.Sweep == nil {
		return tb.Status.Results
	}
	value := tb.PointValue(point)
	first, last := -1, -1
	for i := range tb.Status.Results {
		if tb.Status.Results[i].Point == value {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	window := tb.Status.Results[first : last+1 : last+1]
	if !slices.ContainsFunc(window, func(r TransportResult) bool { return r.Point != value }) {
		return window
	}
	return slices.DeleteFunc(slices.Clone(window), func(r TransportResult) bool { return r.Point != value })
}

// FindResult is the result of a transport in a list of results, or nil.
func FindResult(results []TransportResult, transport string) *TransportResult {
	for i := range results {
		if results[i].Transport == transport {
			return &results[i]
		}
	}
	return nil
}

// RunnerAccountName is the ServiceAccount (and its Role and RoleBinding) of the benchmark's runner
// pods: it may write their result ConfigMaps and nothing else.
func (tb *TunnelBenchmark) RunnerAccountName() string {
	return tb.ObjectName(roleRunner, "")
}

// GatewayName is the name of the SSH gateway's Deployment, Service and key Secret.
func (tb *TunnelBenchmark) GatewayName() string {
	return tb.ObjectName(roleGateway, "")
}

// PoolerName is the name of the pooler objects (Deployment, Service, TLS Secret or CloudNativePG
// Pooler) of a pooler transport.
func (tb *TunnelBenchmark) PoolerName(transport string) string {
	return tb.ObjectName(rolePooler, transport)
}

// PoolerMetricsName is the headless Service over the pods of a CloudNativePG Pooler, whose
// PgBouncer exporters the runner reads.
func (tb *TunnelBenchmark) PoolerMetricsName(transport string) string {
	return tb.ObjectName(rolePoolerMetrics, transport)
}

// ClientCertificateName is the Certificate (and Secret) of a TLS transport's client certificate.
func (tb *TunnelBenchmark) ClientCertificateName(transport string) string {
	return tb.ObjectName(roleClientCert, transport)
}

// TimeoutDuration is spec.timeout with its default applied.
func (tb *TunnelBenchmark) TimeoutDuration() time.Duration {
	if tb.Spec.Timeout == nil {
		return DefaultTimeout
	}
	return tb.Spec.Timeout.Duration
}

// RunnerPods is spec.runner.pods with its default applied: how many pods run each measured run.
func (tb *TunnelBenchmark) RunnerPods() int {
	if r := tb.Spec.Runner; r != nil && r.Pods > 1 {
		return int(r.Pods)
	}
	return 1
}

// Repetitions is spec.load.repetitions with its default applied.
func (tb *TunnelBenchmark) Repetitions() int32 {
	if tb.Spec.Load.Repetitions < 1 {
		return DefaultRepetitions
	}
	return tb.Spec.Load.Repetitions
}

// Rounds is how many rounds the benchmark runs: spec.load.repetitions, or fewer once a precision
// target stopped it (status.precision.stoppedAfter).
func (tb *TunnelBenchmark) Rounds() int32 {
	if p := tb.Status.Precision; p != nil && p.StoppedAfter > 0 {
		return min(p.StoppedAfter, tb.Repetitions())
	}
	return tb.Repetitions()
}

// Order is spec.load.order with its default applied.
func (tb *TunnelBenchmark) Order() RunOrder {
	if tb.Spec.Load.Order == "" {
		return DefaultOrder
	}
	return tb.Spec.Load.Order
}

// WarmupDuration is spec.load.warmup with its default applied.
func (tb *TunnelBenchmark) WarmupDuration() time.Duration {
	if tb.Spec.Load.Warmup == nil {
		return DefaultWarmup
	}
	return tb.Spec.Load.Warmup.Duration
}

// TotalRuns is how many measured runs the benchmark makes: points × transports × rounds (the
// repetitions, or fewer once a precision target stopped it).
func (tb *TunnelBenchmark) TotalRuns() int {
	return tb.Points() * len(tb.Spec.Transports) * int(tb.Rounds())
}

// PlannedRunTime is how long the measured runs take at least: points × transports × repetitions
// × (warm-up + duration), what spec.timeout must cover (the CEL rule on TunnelBenchmark checks
// the same product at apply), without pods' start or the initialization. False for a load of a
// number of transactions or a copy, whose length is not known before it runs.
func (tb *TunnelBenchmark) PlannedRunTime() (time.Duration, bool) {
	l := tb.Spec.Load
	if l.Copy != nil || l.Transactions != nil {
		return 0, false
	}
	run := DefaultDuration
	if l.Duration != nil {
		run = l.Duration.Duration
	}
	runs := tb.Points() * len(tb.Spec.Transports) * int(tb.Repetitions())
	return time.Duration(runs) * (run + tb.WarmupDuration()), true
}

// Done reports whether every repetition of the transport has run.
func (r *TransportResult) Done(repetitions int32) bool {
	return r != nil && r.Repetitions >= repetitions
}

// Result returns the recorded result of a transport of a benchmark without a sweep, or nil.
func (s *TunnelBenchmarkStatus) Result(transport string) *TransportResult {
	return FindResult(s.Unswept(), transport)
}

// Unswept is the results of a benchmark without a sweep (every result is at point 0), none of a
// swept one's (every point of a sweep is a value of at least 1): what a reader of one figure per
// transport reads.
func (s *TunnelBenchmarkStatus) Unswept() []TransportResult {
	if slices.ContainsFunc(s.Results, func(r TransportResult) bool { return r.Point != 0 }) {
		return nil
	}
	return s.Results
}

// AllResults is every recorded result, of every point.
func (s *TunnelBenchmarkStatus) AllResults() []*TransportResult {
	out := make([]*TransportResult, 0, len(s.Results))
	for i := range s.Results {
		out = append(out, &s.Results[i])
	}
	return out
}

// ProgressString renders "done/total".
func ProgressString(done, total int) string { return fmt.Sprintf("%d/%d", done, total) }

// maxClusterNameLength is CloudNativePG's limit on Cluster names, which become parts of Service,
// Secret and pod names.
const maxClusterNameLength = 50

// ManagedClusterName is the name of the CloudNativePG Cluster created for spec.server.managed:
// <benchmark>-pg, which a user can predict (and which the operator refuses to adopt when someone
// else's Cluster already has it).
func (tb *TunnelBenchmark) ManagedClusterName() string {
	name := tb.Name + "-pg"
	if len(name) <= maxClusterNameLength {
		return name
	}
	return hashed(name, name, 8, maxClusterNameLength)
}

// CNPGClusterName is the CloudNativePG Cluster of the server, or "" for an external server.
func (s ServerSpec) CNPGClusterName(tb *TunnelBenchmark) string {
	switch {
	case s.CNPG != nil:
		return s.CNPG.ClusterName
	case s.Managed != nil:
		return tb.ManagedClusterName()
	}
	return ""
}

// BytesPerScale is about what `pgbench -i` writes on the server per unit of spec.load.scale:
// 100,000 pgbench_accounts rows (13 MB) and their primary key (2 MB), rounded up.
const BytesPerScale = 16 << 20

// ManagedStorageProblem says why a managed server's volume cannot hold the initialized data set
// (pgbench's tables, or the copy's), "" when it can or nothing is initialized. The CRD cannot
// check it: a CEL rule comparing the two quantities exceeds the API server's cost budget.
func (tb *TunnelBenchmark) ManagedStorageProblem() string {
	m := tb.Spec.Server.Managed
	if m == nil || m.StorageSize == nil || !tb.Spec.Load.Initialize {
		return ""
	}
	var what string
	var need resource.Quantity
	if c := tb.Spec.Load.Copy; c != nil {
		what, need = "spec.load.copy.size "+c.Size.String(), c.Size
	} else {
		scale := max(tb.Spec.Load.Scale, 1)
		what = fmt.Sprintf("spec.load.scale %d (pgbench -i writes about 16Mi per unit)", scale)
		need = *resource.NewQuantity(int64(scale)*BytesPerScale, resource.BinarySI)
	}
	if m.StorageSize.Cmp(need) > 0 {
		return ""
	}
	return fmt.Sprintf("spec.server.managed.storageSize %s cannot hold %s, %s of data before the server's WAL: raise storageSize",
		m.StorageSize.String(), what, need.String())
}

// IsExclusive reports whether the benchmark waits for the other benchmarks of its server
// (spec.exclusive, default true).
func (tb *TunnelBenchmark) IsExclusive() bool {
	return tb.Spec.Exclusive == nil || *tb.Spec.Exclusive
}

// MaxFailedShare is the share of a run's transactions that may fail (serialization or deadlock
// failures, which pgbench counts and goes on) before the run is left out of every comparison: its
// tps counts the transactions that succeeded, so a path that makes them fail would look faster
// with every failure it causes, and one percent is already more than a well-behaved load sees.
const MaxFailedShare = 0.01

// FailedTooOften reports whether more than MaxFailedShare of the run's transactions failed.
func (r RunResult) FailedTooOften() bool {
	all := r.Transactions + r.FailedTransactions
	return all > 0 && float64(r.FailedTransactions) > MaxFailedShare*float64(all)
}

// MaxSkippedShare is the share of an open-loop run's scheduled transactions that may be skipped
// (already spec.load.latencyLimit behind schedule) before the run is left out of every
// comparison: its latency describes only the transactions it ran, so a path that cannot keep the
// rate would look better the more it skips.
const MaxSkippedShare = 0.01

// SkippedTooOften reports whether an open-loop run skipped more than MaxSkippedShare of its
// schedule.
func (r RunResult) SkippedTooOften() bool {
	if r.OpenLoop == nil {
		return false
	}
	all := r.Transactions + r.FailedTransactions + r.OpenLoop.Skipped
	return all > 0 && float64(r.OpenLoop.Skipped) > MaxSkippedShare*float64(all)
}

// Counted reports whether the run takes part in comparisons.
func (r RunResult) Counted() bool {
	return !r.FailedTooOften() && !r.SkippedTooOften()
}

// Figure is what a run is compared by, higher is better: its tps; its MB/s for a copy load; for
// an open-loop run, whose tps is the rate asked, the inverse of its mean latency (transactions per
// second of one client's latency), so that the ratio of two is the inverse ratio of their mean
// latencies.
func (r RunResult) Figure() float64 {
	switch {
	case r.MBPerSecond != nil:
		return *r.MBPerSecond
	case r.OpenLoop != nil:
		if r.LatencyAvgMs <= 0 {
			return 0
		}
		return 1000 / r.LatencyAvgMs
	}
	return r.TPS
}

// CountedFigures are the figures of the result's runs that take part in comparisons, in the
// order the runs were recorded.
func (r *TransportResult) CountedFigures() []float64 {
	var out []float64
	for _, run := range r.Runs {
		if run.Counted() {
			out = append(out, run.Figure())
		}
	}
	return out
}

// PairedFigures returns the figures of the rounds both results have run, in a's order, leaving
// out a round in which either run is not Counted.
func PairedFigures(a, b *TransportResult) (as, bs []float64) {
	for _, ra := range a.Runs {
		for _, rb := range b.Runs {
			if ra.Round == rb.Round && ra.Counted() && rb.Counted() {
				as, bs = append(as, ra.Figure()), append(bs, rb.Figure())
			}
		}
	}
	return as, bs
}

// MaxPathDescription bounds TransportResult.Path, as its schema does.
const MaxPathDescription = 512
