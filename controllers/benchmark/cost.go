package benchmark

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/budget"
	"github.com/tunnelbench/tunnelbench/internal/analysis/cost"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// placement is where a run's parts ran, observed at its end: the runner's node, the server's pod
// (and why it is not seen) and the transport's peer's pod (the SSH gateway, a shared PgBouncer).
type placement struct {
	node   string
	server serverView
	peer   *corev1.Pod
}

func (p placement) serverNode() string { return nodeOf(p.server.pod) }
func (p placement) peerNode() string   { return nodeOf(p.peer) }

func nodeOf(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Spec.NodeName
}

// runCost is what the run's parts consumed, from the runner's report — the client (pgbench and
// the runner, in the runner container) first, then each sidecar of the runner pod in the pod's
// order, a peer's (the gateway's, a shared pooler's) and the server's — the parts whose CPU is not
// known, with why, and what ran out first: a part short of CPU, else the runner's node when the
// parts on it used its cores together, else the link when the run reached its round trip's bound.
// A part could use its pod's CPU limit, else its node's allocatable CPU.
//
// cycleMs is the run's round trip when it is one closed loop (nil otherwise): its budget splits it
// by the parts' threads, a single thread at a full core is a limiter before the node and the link,
// and when nothing ran out the limiter is latency.
func (r *TunnelBenchmarkReconciler) runCost(ctx context.Context, job *batchv1.Job, at placement,
	rep *report.Report, cycleMs *float64) (runCosts, *benchv1.Limiter) {
	if rep.Result == nil {
		return runCosts{}, nil
	}
	nodeCores := r.nodeCores(ctx, at.node)
	var seen []partSeen
	if rep.CPU != nil {
		seen = append(seen, partSeen{name: benchv1.PartClient, cpu: rep.CPU,
			cores: cmp.Or(containerLimit(job, runspec.RunnerContainerName), nodeCores), local: true})
	}
	for _, s := range rep.Sidecars {
		p := partSeen{name: s.Part, cpu: &s.CPU}
		switch {
		case s.Part == benchv1.PartServer:
			p.cores, p.local = r.podCores(ctx, at.server.pod), at.serverNode() == at.node
		case s.Remote:
			p.cores, p.local = r.podCores(ctx, at.peer), at.peerNode() == at.node
		default:
			p.cores, p.local = cmp.Or(containerLimit(job, s.Part), nodeCores), true
		}
		seen = append(seen, p)
	}
	return decideCosts(rep, seen, at.node, nodeCores, cycleMs, func(parts []benchv1.PartCost) []benchv1.UnmeasuredPart {
		return unmeasuredParts(rep, parts, at.server, r.serverPart)
	})
}

// partSeen is one part's accounting with what the API says of it: the CPU it could use and
// whether it ran on the runner's node.
type partSeen struct {
	name  string
	cpu   *report.CPU
	cores float64
	local bool
}

// decideCosts is runCost's pure part: each part's cost, the parts not measured (unmeasured, from
// the parts measured), the round trip's budget, and the limiter in its documented order.
func decideCosts(rep *report.Report, seen []partSeen, node string, nodeCores float64, cycleMs *float64,
	unmeasured func([]benchv1.PartCost) []benchv1.UnmeasuredPart) (runCosts, *benchv1.Limiter) {
	var parts []benchv1.PartCost
	var onNode []cost.Shared // the parts that ran on the runner's node
	var threads []budget.Part
	// The emulated link counts how long it held the load's data, and a pooler how long its clients
	// waited for a server connection, between the runner's reads at the load's ends.
	linkHeld, linkCounted := transport.LinkHeld(rep)
	for _, p := range seen {
		if len(parts) < maxParts {
			parts = append(parts, cost.Part(p.name, p.cpu, rep.Result.Transactions, p.cores))
			bp := budget.Part{Name: p.name, Threads: p.cpu.Threads}
			switch loaded := rep.EndTime.Sub(rep.StartTime).Seconds(); {
			case p.name == transport.LinkContainer && linkCounted:
				// Its threads' work is its precise sleep's end, inside the holds (measured in the
				// e2e: 1.5 ms of threads per 10 ms round trip, which the hold already counts).
				bp.Held, bp.HeldWindow, bp.HeldCoversThreads = linkHeld, loaded, true
			case rep.Pooler != nil && rep.Pooler.WaitCounted && p.name == rep.Pooler.Part:
				// Its clients' wait for a server connection: a queue, in no thread.
				bp.Held, bp.HeldWindow = time.Duration(max(rep.Pooler.WaitSeconds, 0)*float64(time.Second)), loaded
			}
			threads = append(threads, bp)
		}
		if p.local {
			onNode = append(onNode, cost.Shared{Part: p.name, CPUSeconds: p.cpu.UserSeconds + p.cpu.SystemSeconds})
		}
	}
	out := runCosts{parts: parts, unmeasured: unmeasured(parts), budget: budget.Of(cycleMs, rep.Result.TPS, threads)}
	limiter := cost.Limiter(parts)
	if limiter == nil {
		limiter = budget.FullCoreLimiter(threads)
	}
	if limiter == nil && rep.CPU != nil {
		limiter = cost.Node(node, onNode, rep.CPU.WindowSeconds, nodeCores)
	}
	if p := rep.Pooler; limiter == nil && p != nil && p.WaitCounted {
		limiter = cost.Pool(p.Part, p.WaitSeconds, rep.EndTime.Sub(rep.StartTime).Seconds(), int(rep.Result.Clients), p.ServerConnections)
	}
	if limiter == nil && rep.Link != nil {
		limiter = cost.Network(rep.Result.TPS, rep.Link.RTTMs, int(rep.Result.Clients))
	}
	if limiter == nil {
		limiter = budget.LatencyLimiter(out.budget)
	}
	return out, limiter
}

// runCosts are a run's costs: each part's CPU, the parts not measured, and the round trip's budget.
type runCosts struct {
	parts      []benchv1.PartCost
	unmeasured []benchv1.UnmeasuredPart
	budget     *benchv1.TimeBudget
}

// unmeasuredParts are the parts the runner could not measure, and the server when it was not
// asked to: why is what the operator sees of the server now (it was not measured when the Job
// was made; what changed since is said as such).
func unmeasuredParts(rep *report.Report, parts []benchv1.PartCost, server serverView,
	serverPart func(serverView) (runspec.CPUPart, string)) []benchv1.UnmeasuredPart {
	var out []benchv1.UnmeasuredPart
	said := false
	for _, u := range rep.Unmeasured {
		said = said || u.Part == benchv1.PartServer
		out = append(out, benchv1.UnmeasuredPart{Part: u.Part, Reason: bounded.Text(u.Reason, 256)})
	}
	measured := slices.ContainsFunc(parts, func(p benchv1.PartCost) bool { return p.Part == benchv1.PartServer })
	if !said && !measured {
		_, why := serverPart(server)
		if why == "" {
			why = "its node reader was not ready when the run's Job was made"
		}
		out = append(out, benchv1.UnmeasuredPart{Part: benchv1.PartServer, Reason: bounded.Text(why, 256)})
	}
	if len(out) > maxParts {
		out = out[:maxParts]
	}
	return out
}

// maxParts is the API's bound on a run's cost parts.
const maxParts = 16

// containerLimit is the CPU limit of a container of the Job's pod (a sidecar is an init
// container), 0 without one.
func containerLimit(job *batchv1.Job, container string) float64 {
	pod := job.Spec.Template.Spec
	for _, c := range append(slices.Clone(pod.Containers), pod.InitContainers...) {
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; c.Name == container && ok {
			return q.AsApproximateFloat64()
		}
	}
	return 0
}

// nodeCores is the node's allocatable CPU; 0 when not known (namespace-scoped mode cannot list
// nodes).
func (r *TunnelBenchmarkReconciler) nodeCores(ctx context.Context, node string) float64 {
	if node == "" {
		return 0
	}
	list := &corev1.NodeList{}
	if err := r.APIReader.List(ctx, list); err != nil {
		log.FromContext(ctx).V(1).Info("Cannot read the nodes' allocatable CPU; utilization unknown", "err", err)
		return 0
	}
	for _, n := range list.Items {
		if n.Name == node {
			q := n.Status.Allocatable[corev1.ResourceCPU]
			return q.AsApproximateFloat64()
		}
	}
	return 0
}

// warnClientBound sets ClientBound, with a Warning event the first time, when the run's limiter
// is the client.
func (r *TunnelBenchmarkReconciler) warnClientBound(tb *benchv1.TunnelBenchmark, transport string, run benchv1.RunResult) {
	if run.Limiter == nil {
		return
	}
	var reason, msg string
	switch run.Limiter.Part {
	case benchv1.PartClient:
		reason = conditions.ReasonClientLimited
		msg = fmt.Sprintf("run %d of transport %s was limited by its client: %s; its tps, and its ratio to the baseline, "+
			"measure this runner's CPU, not the path: give the runner more CPU (spec.runner.resources) or, where one pgbench "+
			"thread was at a full core, more threads (spec.load.threads), or run it on a node apart from the server "+
			"(spec.runner.affinity)", run.Round, transport, run.Limiter.Evidence)
	case benchv1.PartNode:
		reason = conditions.ReasonNodeContention
		msg = fmt.Sprintf("run %d of transport %s was limited by its runner's node: %s; its tps, and its ratio to the "+
			"baseline, measure how this node shares its CPU, not the path: run the runner on a node apart from the server "+
			"(spec.runner.affinity), or on a larger node", run.Round, transport, run.Limiter.Evidence)
	default:
		return
	}
	if !r.hasCondition(tb, conditions.ClientBound, metav1.ConditionTrue, reason) {
		r.event(tb, corev1.EventTypeWarning, conditions.ReasonClientBound, "Measure", "%s", msg)
	}
	r.setCondition(tb, conditions.ClientBound, metav1.ConditionTrue, reason, msg)
}
