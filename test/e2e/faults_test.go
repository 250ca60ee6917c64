//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	poolertransport "github.com/tunnelbench/tunnelbench/internal/transport/pooler"
	"github.com/tunnelbench/tunnelbench/internal/transport/proxy"
	sshtransport "github.com/tunnelbench/tunnelbench/internal/transport/ssh"
	vpntransport "github.com/tunnelbench/tunnelbench/internal/transport/vpn"
	"github.com/tunnelbench/tunnelbench/test/fixture"
	"github.com/tunnelbench/tunnelbench/test/poll"
)

// faultDeadline is how soon after a fault a benchmark must have ended.
const faultDeadline = 60 * time.Second

// faultRound is a fault case's round: long enough for the second one to be measuring when the
// fault comes and to outlast a stall's detection (its StallTimeout, 8 s).
const faultRound = 10 * time.Second

// faultCase is one fault chaos-mesh injects into the second round of a running benchmark.
type faultCase struct {
	name       string
	transports []benchv1.TransportSpec
	// chaos is the chaos-mesh object that injects the fault, for the benchmark's namespace and
	// name; kill, when chaos-mesh cannot inject it, does.
	chaos func(ns, bench string) *unstructured.Unstructured
	kill  func(t *testing.T, ns, bench string)
	// wantPhase, and for a failure one of wantReasons with wantText in its message.
	wantPhase   benchv1.Phase
	wantReasons []string
	wantText    string
	// deadline overrides faultDeadline.
	deadline time.Duration
}

// faultRow is a line of the fault table in docs/operations/faults.md.
type faultRow struct {
	fault, phase, reason string
	seconds              float64
}

func chaosObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	o.SetAPIVersion("chaos-mesh.org/v1alpha1")
	o.SetKind(kind)
	o.SetNamespace(ns)
	o.SetName(name)
	return o
}

func selector(ns string, labels map[string]string) map[string]any {
	l := map[string]any{}
	for k, v := range labels {
		l[k] = v
	}
	return map[string]any{"namespaces": []any{ns}, "labelSelectors": l}
}

// benchmarkPods selects a benchmark's pods of one component.
func benchmarkPods(bench, component string) map[string]string {
	return map[string]string{benchv1.LabelBenchmark: bench, benchv1.LabelComponent: component}
}

func podKill(ns string, labels map[string]string) *unstructured.Unstructured {
	return chaosObject("PodChaos", ns, "fault", map[string]any{
		"action": "pod-kill", "mode": "all", "selector": selector(ns, labels)})
}

// faultsWithChaosMesh injects each fault with chaos-mesh while a benchmark measures, and checks
// that the benchmark ends within faultDeadline with a reason naming what broke (or, for the
// operator, completes), keeps the round that finished, and leaves nothing behind once deleted.
// The PostgreSQL server is killed last: it comes back empty.
func faultsWithChaosMesh(t *testing.T, ns string, pg *fixture.Postgres) {
	operatorPods := map[string]string{"app.kubernetes.io/name": "tunnelbench", "app.kubernetes.io/instance": release}
	serverPods := map[string]string{"app.kubernetes.io/name": "postgres", "app.kubernetes.io/part-of": "tunnelbench-fixture"}
	ssh := []benchv1.TransportSpec{{Name: "ssh", Type: benchv1.TransportSSH}}
	direct := []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	pooler := []benchv1.TransportSpec{{Name: "pooler", Type: benchv1.TransportPooler,
		Pooler: &benchv1.PoolerTransport{Placement: benchv1.PoolerService, ServerTLS: benchv1.ServerTLSRequire}}}
	vpn := []benchv1.TransportSpec{{Name: "wireguard", Type: benchv1.TransportVPN}}
	haproxy := []benchv1.TransportSpec{{Name: "haproxy", Type: benchv1.TransportProxy}}
	cases := []faultCase{
		{name: "runner pod killed", transports: direct,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, specs.RunnerComponent))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonJobFailed}},
		// chaos-mesh's container-kill finds containers in a pod's containerStatuses only
		// (controllers/chaosimpl/utils/record.go), not a native sidecar's initContainerStatuses: it
		// reports the container not found. The node's containerd kills it as chaos-daemon would.
		{name: "tunnel sidecar container killed", transports: ssh, kill: killSidecar("tunnel-0"),
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonTunnelDown}, wantText: "tunnel 0 of 1"},
		{name: "SSH gateway pod killed", transports: ssh,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, sshtransport.GatewayComponent))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonTunnelDown}, wantText: "tunnel"},
		{name: "shared PgBouncer pod killed", transports: pooler,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, poolertransport.PoolerComponent))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonPoolerUnavailable}, wantText: "pod was replaced during the run"},
		{name: "WireGuard gateway pod killed", transports: vpn,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, vpntransport.VPNGatewayComponent))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonTunnelDown}, wantText: "vpn-gateway"},
		{name: "WireGuard sidecar container killed", transports: vpn, kill: killSidecar(vpntransport.VPNClientContainer),
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonTunnelDown}, wantText: vpntransport.VPNClientContainer},
		{name: "HAProxy pod killed", transports: haproxy,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return podKill(ns, benchmarkPods(b, proxy.Component))
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonProxyUnavailable}, wantText: "proxy"},
		{name: "runner partitioned from the server", transports: direct,
			chaos: func(ns, b string) *unstructured.Unstructured {
				return chaosObject("NetworkChaos", ns, "fault", map[string]any{"action": "partition", "mode": "all",
					"direction": "both", "selector": selector(ns, benchmarkPods(b, specs.RunnerComponent)),
					"target": map[string]any{"mode": "all", "selector": selector(ns, serverPods)}})
			},
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonStalled}, wantText: "no transaction completed"},
		{name: "operator pod killed", transports: direct,
			chaos: func(ns, _ string) *unstructured.Unstructured {
				return podKill(operatorNamespace, operatorPods)
			},
			// A killed leader does not release its lease: the next one takes it when it expires.
			wantPhase: benchv1.PhaseCompleted, deadline: operatorFailoverDeadline(t)},
		{name: "PostgreSQL server pod killed", transports: direct,
			chaos:     func(ns, _ string) *unstructured.Unstructured { return podKill(ns, serverPods) },
			wantPhase: benchv1.PhaseFailed, wantReasons: []string{conditions.ReasonConnectionLost},
			// pgbench's words vary with the moment: "unexpected postmaster exit", "perhaps the
			// backend died while processing".
			wantText: "the connection to the server was lost during the run"},
	}
	var rows []faultRow
	for i, fc := range cases {
		ok := t.Run(fc.name, func(t *testing.T) {
			if fc.kill != nil && os.Getenv("E2E_CONTAINERD_SOCKET") == "" {
				// Before its benchmark exists: a skip after would leave it running into the next case.
				t.Skip("E2E_CONTAINERD_SOCKET is not set: killing a native sidecar needs the node's containerd (the local cluster)")
			}
			tb := benchmark(ns, fmt.Sprintf("fault-%d", i+1), pg, fixture.CredentialsSecret)
			tb.Spec.Transports = fc.transports
			rows = append(rows, injectFault(t, tb, fc))
		})
		if !ok && fc.wantPhase == benchv1.PhaseCompleted {
			return
		}
	}
	var table strings.Builder
	table.WriteString("| fault (chaos-mesh) | phase | reason | seconds to final phase |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&table, "| %s | %s | %s | %.0f |\n", r.fault, r.phase, r.reason, r.seconds)
	}
	t.Logf("faults:\n%s", table.String())
}

// injectFault runs tb (its transports those of fc) and injects fc's fault into its second round.
func injectFault(t *testing.T, tb *benchv1.TunnelBenchmark, fc faultCase) faultRow {
	ns, name := tb.Namespace, tb.Name
	// Two sequential rounds: the fault hits the second, so the first is a finished result that
	// must stay.
	tb.Spec.Load.Repetitions, tb.Spec.Load.Order = 2, benchv1.OrderSequential
	tb.Spec.Load.Duration = &metav1.Duration{Duration: faultRound}
	tb.Spec.Load.ProgressInterval = &metav1.Duration{Duration: time.Second}
	tb.Spec.Load.StallTimeout = &metav1.Duration{Duration: 8 * time.Second}
	tb.Spec.Load.Initialize = false
	if err := fixture.CreateBenchmark(ctx, k8s, tb); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 3*time.Minute, time.Second, "the second round measuring", func() error {
		cur := &benchv1.TunnelBenchmark{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tb), cur); err != nil {
			return err
		}
		if cur.Status.Phase.IsTerminal() {
			t.Fatalf("ended before the fault: %s %+v", cur.Status.Phase, cur.Status.Conditions)
		}
		if l := cur.Status.Live; l == nil || l.Round != 2 || l.Phase != "load" || l.TPS == 0 {
			return fmt.Errorf("live %+v", cur.Status.Live)
		}
		return nil
	})
	injected := time.Now()
	var chaos *unstructured.Unstructured
	if fc.chaos != nil {
		chaos = fc.chaos(ns, name)
		// A name of its own: the previous case's object may still be going.
		chaos.SetName(name)
		if err := k8s.Create(ctx, chaos); err != nil {
			t.Fatalf("cannot create the %s: %v", chaos.GetKind(), err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, chaos) })
	} else {
		fc.kill(t, ns, name)
	}
	deadline := faultDeadline
	if fc.deadline > 0 {
		deadline = fc.deadline
	}
	end := waitForEnd(t, ns, name, deadline+60*time.Second)
	seconds := end.Status.CompletionTime.Sub(injected).Seconds()
	reason := ""
	if c := meta.FindStatusCondition(end.Status.Conditions, conditions.Failed); c != nil && c.Status == metav1.ConditionTrue {
		reason = c.Reason
		t.Logf("%s: %s after %.0f s: %s", fc.name, c.Reason, seconds, c.Message)
	}
	if end.Status.Phase != fc.wantPhase {
		dump(t, ns)
		t.Errorf("phase %s (%s), want %s", end.Status.Phase, reason, fc.wantPhase)
	}
	if fc.wantPhase == benchv1.PhaseFailed {
		c := meta.FindStatusCondition(end.Status.Conditions, conditions.Failed)
		if c == nil || !containsString(fc.wantReasons, c.Reason) || !strings.Contains(c.Message, fc.wantText) {
			t.Errorf("Failed condition %+v, want one of %v with %q", c, fc.wantReasons, fc.wantText)
		}
	}
	if seconds > deadline.Seconds() {
		t.Errorf("ended %.0f s after the fault, more than %s", seconds, deadline)
	}
	r := end.Status.Result(fc.transports[0].Name)
	wantRuns := map[benchv1.Phase]int32{benchv1.PhaseCompleted: 2, benchv1.PhaseFailed: 1}[fc.wantPhase]
	if r == nil || r.Repetitions != wantRuns || r.TPS == 0 {
		t.Errorf("the finished rounds are not in status (want %d): %+v", wantRuns, r)
	}
	if chaos != nil {
		if err := k8s.Delete(ctx, chaos); err != nil {
			t.Errorf("cannot delete the %s: %v", chaos.GetKind(), err)
		}
	}
	if err := k8s.Delete(ctx, end); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, ns, name)
	return faultRow{fault: fc.name, phase: string(end.Status.Phase), reason: reason, seconds: seconds}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// assertNothingLeft waits until no object labelled with the benchmark remains: Jobs, pods,
// Secrets, Deployments, Services, ConfigMaps, NetworkPolicies, the runner's ServiceAccount, Role
// and RoleBinding, NetworkChaos, Certificates, CloudNativePG Poolers and managed Clusters.
func assertNothingLeft(t *testing.T, ns, name string) {
	t.Helper()
	sel := client.MatchingLabels{benchv1.LabelBenchmark: name}
	lists := map[string]func() client.ObjectList{
		"Job":            func() client.ObjectList { return &batchv1.JobList{} },
		"Pod":            func() client.ObjectList { return &corev1.PodList{} },
		"Secret":         func() client.ObjectList { return &corev1.SecretList{} },
		"Service":        func() client.ObjectList { return &corev1.ServiceList{} },
		"ConfigMap":      func() client.ObjectList { return &corev1.ConfigMapList{} },
		"Deployment":     func() client.ObjectList { return &appsv1.DeploymentList{} },
		"NetworkPolicy":  func() client.ObjectList { return &networkingv1.NetworkPolicyList{} },
		"ServiceAccount": func() client.ObjectList { return &corev1.ServiceAccountList{} },
		"Role":           func() client.ObjectList { return &rbacv1.RoleList{} },
		"RoleBinding":    func() client.ObjectList { return &rbacv1.RoleBindingList{} },
	}
	for kind, apiVersion := range map[string]string{"NetworkChaos": "chaos-mesh.org/v1alpha1",
		"Certificate": "cert-manager.io/v1", "Pooler": "postgresql.cnpg.io/v1", "Cluster": "postgresql.cnpg.io/v1"} {
		lists[kind] = func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion(apiVersion)
			l.SetKind(kind + "List")
			return l
		}
	}
	poll.Until(t, 2*time.Minute, time.Second, "nothing of "+name+" left", func() error {
		var left []string
		for kind, newList := range lists {
			l := newList()
			if err := k8s.List(ctx, l, client.InNamespace(ns), sel); err != nil {
				if meta.IsNoMatchError(err) {
					continue
				}
				return err
			}
			if n := meta.LenList(l); n > 0 {
				left = append(left, fmt.Sprintf("%d %s", n, kind))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

// killSidecar kills a native sidecar of the benchmark's running runner pod through the node's
// containerd (SIGKILL to its task, what chaos-daemon's container-kill does); the kubelet restarts
// it. It needs the local cluster's containerd socket (E2E_CONTAINERD_SOCKET).
func killSidecar(container string) func(t *testing.T, ns, bench string) {
	return func(t *testing.T, ns, bench string) {
		socket := os.Getenv("E2E_CONTAINERD_SOCKET") // faultsWithChaosMesh skips the case without it
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(benchmarkPods(bench, specs.RunnerComponent))); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			for _, cs := range p.Status.InitContainerStatuses {
				if cs.Name != container || cs.State.Running == nil || p.Status.Phase != corev1.PodRunning {
					continue
				}
				id := strings.TrimPrefix(cs.ContainerID, "containerd://")
				if out, err := run(t, "ctr", "-a", socket, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id); err != nil {
					t.Fatalf("ctr tasks kill %s: %v\n%s", id, err, out)
				}
				return
			}
		}
		t.Fatalf("no running %s sidecar among %d runner pods", container, len(pods.Items))
	}
}

// operatorFailoverDeadline is how soon a benchmark must end after its operator's pod was killed, from
// what the chart configures: a killed leader cannot release its lease, so its successor waits up to
// leaderElection.leaseDuration from the last renewal, then up to retryPeriod to try again; the
// rest of the run (at most its round, faultRound) and a pass follow within faultDeadline.
func operatorFailoverDeadline(t *testing.T) time.Duration {
	b, err := os.ReadFile(filepath.Join("..", "..", "charts", "tunnelbench", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		LeaderElection struct {
			LeaseDuration metav1.Duration `json:"leaseDuration"`
			RetryPeriod   metav1.Duration `json:"retryPeriod"`
		} `json:"leaderElection"`
	}
	if err := yaml.Unmarshal(b, &values); err != nil || values.LeaderElection.LeaseDuration.Duration == 0 {
		t.Fatalf("the chart's leaderElection values: %v", err)
	}
	return values.LeaderElection.LeaseDuration.Duration + values.LeaderElection.RetryPeriod.Duration + faultDeadline
}
