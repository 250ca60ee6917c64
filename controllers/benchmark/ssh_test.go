package benchmark

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/engine"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

// TestSSHTransportLifecycle: the operator generates the keys, starts the gateway, waits until it
// is available, runs the Job with one sidecar per tunnel, records what ssh negotiated and the
// per-tunnel figures, and removes the gateway once the benchmark has ended.
func TestSSHTransportLifecycle(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	tb := newBenchmark(ns, "tunnels",
		benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
		benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH, SSH: &benchv1.SSHTransport{
			Tunnels: 2, Cipher: "aes128-ctr", MAC: "hmac-sha2-256-etm@openssh.com", Compression: true}})
	if err := testClient.Create(ctx, inSpecOrder(tb)); err != nil {
		t.Fatal(err)
	}
	finishJob(t, waitForJob(t, ns, jobName(tb.Name, "direct")), 0, resultReport(1000, nil))

	gwName := tb.GatewayName()
	key := types.NamespacedName{Namespace: ns, Name: gwName}
	dep, secret, svc := &appsv1.Deployment{}, &corev1.Secret{}, &corev1.Service{}
	eventually(t, 15*time.Second, "the SSH gateway", func() error {
		for _, o := range []client.Object{dep, secret, svc} {
			if err := testClient.Get(ctx, key, o); err != nil {
				return err
			}
		}
		return nil
	})
	for _, o := range []metav1.Object{dep, secret, svc} {
		if ref := metav1.GetControllerOf(o); ref == nil || ref.Name != "tunnels" {
			t.Errorf("%s is not owned by the benchmark: %+v", o.GetName(), ref)
		}
	}
	if !strings.Contains(strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "), "PermitOpen=pg-rw:5432") {
		t.Errorf("sshd args %v", dep.Spec.Template.Spec.Containers[0].Args)
	}
	if _, err := sshkeysParse(secret, gwName); err != nil {
		t.Errorf("key Secret: %v", err)
	}

	assertNoJobYet(t, ns, jobName(tb.Name, "ssh"), "the SSH gateway")
	markAvailable(t, dep)

	job := waitForJob(t, ns, jobName(tb.Name, "ssh"))
	sidecars := job.Spec.Template.Spec.InitContainers
	if len(sidecars) != 2 || *sidecars[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Fatalf("sidecars %+v", sidecars)
	}
	finishJob(t, job, 0, sshReport(t))

	done := waitForPhase(t, ns, "tunnels", benchv1.PhaseCompleted)
	res := done.Status.Result("ssh")
	if res == nil || res.SSH == nil || res.SSH.Cipher != "aes128-ctr" || res.SSH.Compression != "zlib@openssh.com" || len(res.Tunnels) != 2 {
		t.Fatalf("ssh result %+v", res)
	}
	assertEvents(t, ns, "tunnels", "GatewayCreated")

	// An ended benchmark keeps no sshd running, nor its keys.
	eventually(t, 10*time.Second, "the gateway removed", func() error {
		for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Secret{}, &corev1.Service{}} {
			if err := testClient.Get(ctx, key, o); err == nil {
				return errorf("%T still exists", o)
			}
		}
		return nil
	})
	if b, _ := json.Marshal(done.Status); strings.Contains(string(b), "PRIVATE KEY") {
		t.Error("key material in status")
	}
}

func sshReport(t *testing.T) string {
	t.Helper()
	stddev := 0.3
	b, err := json.Marshal(report.Report{
		Result: &engine.Result{TPS: 300, LatencyAvgMs: 13, LatencyStddevMs: &stddev, ConnectionTimeMs: 40,
			Transactions: 3000, Clients: 4, Threads: 2},
		SSH: &sshtunnel.Negotiated{Cipher: "aes128-ctr", MAC: "hmac-sha2-256-etm@openssh.com", Compression: "zlib@openssh.com"},
		Tunnels: []report.Tunnel{
			{Index: 0, TPS: 160, LatencyAvgMs: 12, Transactions: 1600},
			{Index: 1, TPS: 140, LatencyAvgMs: 14, Transactions: 1400},
		},
		Command: "pgbench -b select-only -c 4 -j 2 -T 10",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sshkeysParse(s *corev1.Secret, gateway string) (int, error) {
	for _, k := range []string{sshkeys.HostKey, sshkeys.AuthorizedKeys, sshkeys.ClientKey, sshkeys.KnownHosts} {
		if len(s.Data[k]) == 0 {
			return 0, errorf("no %s", k)
		}
	}
	if !strings.Contains(string(s.Data[sshkeys.KnownHosts]), "["+gateway+"."+s.Namespace+".svc]:2222 ssh-ed25519 ") {
		return 0, errorf("known_hosts %s", s.Data[sshkeys.KnownHosts])
	}
	return len(s.Data), nil
}

// TestGatewayNeverAvailableFails: a gateway Deployment that passes its progress deadline without
// an available pod (its pods run but never turn ready) ends the benchmark with TunnelDown and the
// Deployment controller's message, not at spec.timeout.
func TestGatewayNeverAvailableFails(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	ctx := context.Background()
	tb := newBenchmark(ns, "stuck-gateway", benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH})
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	startOperator(t)
	dep := &appsv1.Deployment{}
	eventually(t, 15*time.Second, "the SSH gateway", func() error {
		return testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: tb.GatewayName()}, dep)
	})
	if dep.Spec.ProgressDeadlineSeconds == nil || *dep.Spec.ProgressDeadlineSeconds != 180 {
		t.Errorf("progress deadline %v, want 180 s", dep.Spec.ProgressDeadlineSeconds)
	}
	// The Deployment controller's verdict once the deadline passed.
	dep.Status = appsv1.DeploymentStatus{Replicas: 1, UnavailableReplicas: 1, ObservedGeneration: dep.Generation,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "x" has timed out progressing.`}}}
	if err := testClient.Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	end := waitForPhase(t, ns, "stuck-gateway", benchv1.PhaseFailed)
	assertCondition(t, end, conditions.Failed, metav1.ConditionTrue, conditions.ReasonTunnelDown)
	if c := meta.FindStatusCondition(end.Status.Conditions, conditions.Failed); !strings.Contains(c.Message, "timed out progressing") {
		t.Errorf("message %q", c.Message)
	}
}

// TestGatewayNetworkPolicy: with NetworkPolicies on, the gateway's NetworkPolicy (owned by the
// benchmark) exists before its Deployment and is removed with the gateway once the benchmark ends.
func TestGatewayNetworkPolicy(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t, func(r *TunnelBenchmarkReconciler) { r.NetworkPolicies = true })
	ctx := context.Background()
	tb := newBenchmark(ns, "guarded", benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH})
	if err := testClient.Create(ctx, tb); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: tb.GatewayName()}
	policy, dep := &networkingv1.NetworkPolicy{}, &appsv1.Deployment{}
	eventually(t, 15*time.Second, "the gateway and its NetworkPolicy", func() error {
		if err := testClient.Get(ctx, key, dep); err != nil {
			return err
		}
		return testClient.Get(ctx, key, policy)
	})
	if ref := metav1.GetControllerOf(policy); ref == nil || ref.Name != tb.Name {
		t.Errorf("policy owner %+v", ref)
	}
	if policy.CreationTimestamp.After(dep.CreationTimestamp.Time) {
		t.Error("the gateway ran before its NetworkPolicy existed")
	}
	markAvailable(t, dep)
	finishJob(t, waitForJob(t, ns, jobName(tb.Name, "ssh")), 0, sshReport(t))
	waitForPhase(t, ns, tb.Name, benchv1.PhaseCompleted)
	eventually(t, 10*time.Second, "the NetworkPolicy removed", func() error {
		if err := testClient.Get(ctx, key, &networkingv1.NetworkPolicy{}); err == nil {
			return errorf("still there")
		}
		return nil
	})
}
