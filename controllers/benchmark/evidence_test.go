package benchmark

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// createPod plays a controller making a pod with the labels, and the kubelet giving it status.
func createPod(t *testing.T, ns, name string, labels map[string]string, status corev1.PodStatus) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if err := testClient.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = status
	if err := testClient.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// TestFailuresBlameThePath: a run that lost its connections is blamed on what the operator saw
// change on its path while it ran — the SSH gateway's pod replaced, a tunnel sidecar restarted —
// with pgbench's words kept; a CloudNativePG server's restarted pod is added to the message.
func TestFailuresBlameThePath(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	lost := failureReport(conditions.ReasonConnectionLost,
		"the connection to the server was lost during the run: perhaps the backend died while processing")
	// The server's instance, running since before the benchmarks.
	createPod(t, ns, "pg-1", map[string]string{cnpgClusterLabel: "pg"}, corev1.PodStatus{})
	restarted := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, RestartCount: 1, LastTerminationState: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137, FinishedAt: metav1.Now()}}}
	}
	tests := []struct {
		name       string
		transport  benchv1.TransportSpec
		fault      func(t *testing.T, tb *benchv1.TunnelBenchmark) []func(*corev1.PodStatus)
		wantReason string
		wantText   []string
	}{
		{"the gateway's pod replaced", benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH},
			func(t *testing.T, tb *benchv1.TunnelBenchmark) []func(*corev1.PodStatus) {
				dep := &appsv1.Deployment{}
				if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: tb.GatewayName()}, dep); err != nil {
					t.Fatal(err)
				}
				// Creation times have a resolution of a second.
				time.Sleep(1100 * time.Millisecond)
				createPod(t, ns, tb.GatewayName()+"-new", dep.Spec.Selector.MatchLabels, corev1.PodStatus{})
				return nil
			}, conditions.ReasonTunnelDown, []string{"ssh-gateway ", "pod was replaced during the run", "perhaps the backend died"}},
		{"a tunnel sidecar restarted", benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH},
			func(t *testing.T, tb *benchv1.TunnelBenchmark) []func(*corev1.PodStatus) {
				return []func(*corev1.PodStatus){func(s *corev1.PodStatus) {
					s.InitContainerStatuses = []corev1.ContainerStatus{restarted("tunnel-0")}
				}}
			}, conditions.ReasonTunnelDown, []string{"sidecar tunnel-0 restarted during the run (it ended Error, exit code 137)"}},
		{"the CloudNativePG primary restarted", benchv1.TransportSpec{Name: "direct", Type: benchv1.TransportDirect},
			func(t *testing.T, tb *benchv1.TunnelBenchmark) []func(*corev1.PodStatus) {
				pod := &corev1.Pod{}
				if err := testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pg-1"}, pod); err != nil {
					t.Fatal(err)
				}
				pod.Status.ContainerStatuses = []corev1.ContainerStatus{restarted("postgres")}
				if err := testClient.Status().Update(ctx, pod); err != nil {
					t.Fatal(err)
				}
				return nil
			}, conditions.ReasonConnectionLost,
			[]string{"perhaps the backend died", "CloudNativePG Cluster pg's pod pg-1 restarted during the run"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newBenchmark(ns, "blame-"+string(rune('a'+i)), tt.transport)
			if err := testClient.Create(ctx, tb); err != nil {
				t.Fatal(err)
			}
			if tt.transport.Type == benchv1.TransportSSH {
				dep := &appsv1.Deployment{}
				eventually(t, 15*time.Second, "the SSH gateway", func() error {
					return testClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: tb.GatewayName()}, dep)
				})
				markAvailable(t, dep)
			}
			job := waitForJob(t, ns, jobName(tb.Name, tt.transport.Name))
			finishJob(t, job, 1, lost, tt.fault(t, tb)...)
			done := waitForPhase(t, ns, tb.Name, benchv1.PhaseFailed)
			c := meta.FindStatusCondition(done.Status.Conditions, conditions.Failed)
			if c == nil || c.Reason != tt.wantReason {
				t.Fatalf("Failed condition %+v, want reason %s", c, tt.wantReason)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(c.Message, want) {
					t.Errorf("message %q lacks %q", c.Message, want)
				}
			}
		})
	}
}

// TestSidecarDeaths: a sidecar that restarted (sidecarRestarts), or that ended out of memory,
// killed no later than the runner's container, or before it (sidecarDied), is named; a sidecar
// the kubelet stopped after the runner ended is not, even one killed at the end of its grace
// period (seen when a gateway died and the run stalled).
func TestSidecarDeaths(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 27, 11, 0, s, 0, time.UTC)) }
	ended := func(code int32, reason string, s int) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: at(s)}}
	}
	pod := func(sidecar corev1.ContainerStatus, runnerEnd int) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{sidecar},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "runner", State: ended(2, "Error", runnerEnd)}}}}
	}
	for _, tc := range []struct {
		name              string
		sidecar           corev1.ContainerStatus
		restarted, killed string
	}{
		{"restarted", corev1.ContainerStatus{Name: "wireguard", RestartCount: 1}, "wireguard", ""},
		{"killed as the run ended", corev1.ContainerStatus{Name: "wireguard", State: ended(137, "Error", 10)}, "", "wireguard"},
		{"out of memory", corev1.ContainerStatus{Name: "pgbouncer", State: ended(1, "OOMKilled", 12)}, "", "pgbouncer"},
		{"ended before the runner", corev1.ContainerStatus{Name: "openvpn", State: ended(1, "Error", 8)}, "", "openvpn"},
		{"killed after its grace period", corev1.ContainerStatus{Name: "openvpn", State: ended(137, "Error", 21)}, "", ""},
		{"stopped after the runner", corev1.ContainerStatus{Name: "wireguard", State: ended(0, "Completed", 10)}, "", ""},
		{"stopped with SIGTERM after the runner", corev1.ContainerStatus{Name: "tunnel-0", State: ended(143, "Error", 11)}, "", ""},
		{"running", corev1.ContainerStatus{Name: "wireguard"}, "", ""},
	} {
		pods := []corev1.Pod{pod(tc.sidecar, 10)}
		for _, check := range []struct {
			what string
			f    func([]corev1.Pod) (string, string)
			want string
		}{{"restarted", sidecarRestarts, tc.restarted}, {"died", sidecarDied, tc.killed}} {
			got, evidence := check.f(pods)
			if got != check.want || (check.want != "" && !strings.Contains(evidence, check.want)) {
				t.Errorf("%s, %s: %q (%s), want %q", tc.name, check.what, got, evidence, check.want)
			}
		}
	}
}
