package ssh

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/testing/transporttest"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

var plain = benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH}

func TestGatewayIsHardenedAndPinned(t *testing.T) {
	tb := transporttest.Benchmark(plain)
	tr := transporttest.For(t, transporttest.Context(t, tb, plain.Name))
	if got, want := transporttest.PeerKinds(t, tr), []string{"Secret", "Service", "NetworkPolicy", "Deployment"}; !slices.Equal(got, want) {
		t.Errorf("peers %v, want %v", got, want)
	}
	dep := transporttest.PeerOf[*appsv1.Deployment](t, tr)
	if ref := metav1.GetControllerOf(dep); ref == nil || ref.UID != "uid-1" {
		t.Errorf("gateway owner %+v", ref)
	}
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"PermitOpen=pg-rw:5432", "PasswordAuthentication=no", "PermitTTY=no", "AllowTcpForwarding=local",
		"X11Forwarding=no", "AllowAgentForwarding=no", "ForceCommand=" + sshtunnel.ForceCommand, "Port=2222"} {
		if !strings.Contains(args, want) {
			t.Errorf("sshd args lack %s: %s", want, args)
		}
	}
	if *pod.SecurityContext.RunAsUser == 0 || !*pod.SecurityContext.RunAsNonRoot || *pod.AutomountServiceAccountToken {
		t.Error("sshd must run unprivileged and without an API token")
	}
	// The gateway sees only its half of the key material.
	var items []corev1.KeyToPath
	for _, v := range pod.Volumes {
		if v.Name == "keys" {
			items = v.Secret.Items
		}
	}
	if len(items) != 2 || items[0].Key != sshkeys.HostKey || items[1].Key != sshkeys.AuthorizedKeys {
		t.Errorf("gateway key items %+v", items)
	}
	a := pod.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
	if a.PodAffinityTerm.LabelSelector.MatchLabels["cnpg.io/cluster"] != "pg" {
		t.Errorf("the gateway should prefer the CloudNativePG cluster's node: %+v", a)
	}
	svc := transporttest.PeerOf[*corev1.Service](t, tr)
	if svc.Name != tb.GatewayName() || svc.Spec.Ports[0].Port != 2222 || svc.Spec.Selector[benchv1.LabelComponent] != GatewayComponent {
		t.Errorf("service %+v", svc)
	}
}

func TestJobWithTunnels(t *testing.T) {
	tr := benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH, SSH: &benchv1.SSHTransport{
		Tunnels: 3, Cipher: "aes256-ctr", MAC: "hmac-sha2-256-etm@openssh.com", Compression: true,
		KeepAliveInterval: &metav1.Duration{Duration: 5 * time.Second}}}
	tb := transporttest.Benchmark(tr)
	tb.Spec.Load.Clients = 8
	job, _ := transporttest.Job(t, transporttest.Context(t, tb, tr.Name))
	pod := &job.Spec.Template.Spec
	if len(pod.InitContainers) != 3 {
		t.Fatalf("%d sidecars, want 3", len(pod.InitContainers))
	}
	for i, s := range pod.InitContainers {
		args := strings.Join(s.Args, " ")
		port := 15432 + i
		for _, want := range []string{"-n -T", "-L 127.0.0.1:" + strconv.Itoa(port) + ":pg-rw:5432", "StrictHostKeyChecking=yes",
			"ExitOnForwardFailure=yes", "-c aes256-ctr", "-m hmac-sha2-256-etm@openssh.com", "Compression=yes",
			"ServerAliveInterval=5", "tunnelbench@" + tb.GatewayName() + ".db.svc"} {
			if !strings.Contains(args, want) {
				t.Errorf("tunnel %d args lack %q: %s", i, want, args)
			}
		}
		if s.RestartPolicy == nil || *s.RestartPolicy != corev1.ContainerRestartPolicyAlways || s.StartupProbe == nil {
			t.Errorf("tunnel %d is not a native sidecar with a startup probe", i)
		}
	}
	runnerArgs := strings.Join(pod.Containers[0].Args, " ")
	if !strings.Contains(runnerArgs, "--tunnels=3 --tunnel-port=15432") {
		t.Errorf("runner args %s", runnerArgs)
	}
	e := transporttest.Env(pod)
	if e["PGHOST"].Value != "127.0.0.1" || e["PGPORT"].Value != "15432" || e["PGSSLMODE"].Value != "disable" {
		t.Errorf("the runner must connect through the tunnels: %v", e)
	}
	// The runner pod sees only the client half of the key material.
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == tb.GatewayName() {
			if len(v.Secret.Items) != 2 || v.Secret.Items[0].Key != sshkeys.ClientKey || v.Secret.Items[1].Key != sshkeys.KnownHosts {
				t.Errorf("client key items %+v", v.Secret.Items)
			}
		}
	}
}

// TestIPv6ServerBehindTheGateway: an IPv6 literal is bracketed where ssh and sshd read host:port
// (-L and PermitOpen), and stays bare where libpq reads it.
func TestIPv6ServerBehindTheGateway(t *testing.T) {
	tr := benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH}
	tb := transporttest.Benchmark(tr)
	tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "fd00::5", Port: 5433, Database: "app",
		CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
	c := transporttest.Context(t, tb, tr.Name)
	c.Server = transport.Server{Host: "fd00::5", Port: 5433, Database: "app", CredentialsSecret: "creds"}
	trn := transporttest.For(t, c)
	run := specs.RunFor(tb, false, time.Minute)
	pod, err := trn.Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(pod.Sidecars[0].Args, " "); !strings.Contains(args, "-L 127.0.0.1:15432:[fd00::5]:5433") {
		t.Errorf("tunnel args %s", args)
	}
	peers, err := trn.Peers()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range peers {
		if dep, ok := p.Object.(*appsv1.Deployment); ok {
			found = true
			if args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "PermitOpen=[fd00::5]:5433") {
				t.Errorf("gateway args %s", args)
			}
		}
	}
	if !found {
		t.Fatal("no gateway Deployment")
	}
}
