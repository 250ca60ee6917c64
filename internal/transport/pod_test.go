package transport

import (
	"flag"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

var server = Server{Host: "pg-rw", Port: 5432, Database: "app", CredentialsSecret: "pg-app",
	UsernameKey: "username", PasswordKey: "password", CASecret: "pg-ca", CAKey: "ca.crt"}

func benchmark(mutate func(*benchv1.TunnelBenchmark)) *benchv1.TunnelBenchmark {
	tb := &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "db", UID: "uid-1"},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server:     benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}},
			Transports: []benchv1.TransportSpec{{Name: "direct", Type: "direct"}},
			Load:       benchv1.LoadSpec{Builtin: "select-only", Clients: 4, Threads: 2},
		},
	}
	if mutate != nil {
		mutate(tb)
	}
	return tb
}

var defaults = specs.RunnerDefaults{Image: "runner:1", PullPolicy: corev1.PullIfNotPresent, WaitTimeout: time.Minute}

// job builds the runner Job of a transport as the reconciler does: the transport's pod and its
// part of the runner's contract.
func job(t *testing.T, tb *benchv1.TunnelBenchmark, tr benchv1.TransportSpec, init bool) (*batchv1.Job, runspec.Run) {
	t.Helper()
	run := specs.RunFor(tb, init, time.Minute)
	pod := ForInit(server)
	if !init {
		trn, err := For(Context{Benchmark: tb, Spec: tr, Server: server, Defaults: defaults})
		if err != nil {
			t.Fatal(err)
		}
		if pod, err = trn.Pod(&run); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.Validate(); err != nil {
		t.Fatalf("the runner would refuse the run: %v", err)
	}
	return specs.Job(specs.JobRequest{Benchmark: tb, Ref: benchv1.RunRef{Transport: tr.Name}, Pod: pod, Run: run,
		ActiveDeadline: 90 * time.Second, Defaults: defaults}), run
}

func build(t *testing.T, tb *benchv1.TunnelBenchmark, tr benchv1.TransportSpec) *corev1.PodSpec {
	t.Helper()
	job, _ := job(t, tb, tr, false)
	if job.Name != tb.JobName(tr.Name) || job.Namespace != "db" || *job.Spec.BackoffLimit != 0 || *job.Spec.ActiveDeadlineSeconds != 90 {
		t.Errorf("job meta/spec: %s/%s backoff %d deadline %d", job.Namespace, job.Name, *job.Spec.BackoffLimit, *job.Spec.ActiveDeadlineSeconds)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != "uid-1" || ref.Kind != "TunnelBenchmark" {
		t.Errorf("controller reference %+v", ref)
	}
	if job.Spec.Template.Labels[benchv1.LabelTransport] != tr.Name || job.Spec.Template.Labels[benchv1.LabelBenchmark] != "bench" {
		t.Errorf("pod labels %v", job.Spec.Template.Labels)
	}
	return &job.Spec.Template.Spec
}

func env(pod *corev1.PodSpec) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range pod.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

func TestJobSecurityAndDefaults(t *testing.T) {
	pod := build(t, benchmark(nil), benchv1.TransportSpec{Name: "direct", Type: "direct"})
	c := pod.Containers[0]
	if *pod.AutomountServiceAccountToken || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("the runner must not get an API token and must not restart")
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if !*psc.RunAsNonRoot || *psc.RunAsUser == 0 || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		*sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("security context is not restricted: pod %+v container %+v", psc, sc)
	}
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("500m")) != 0 {
		t.Errorf("default CPU request = %v, want 500m (a BestEffort runner measures the scheduler)", cpu.String())
	}
	if _, limited := c.Resources.Limits[corev1.ResourceCPU]; limited {
		t.Error("no CPU limit by default: throttling distorts latency")
	}
	if c.Image != "runner:1" || strings.Join(c.Args, " ") != "run --wait-timeout=1m0s --builtin=select-only --protocol=simple "+
		"--clients=4 --threads=2 --duration=1m0s --progress-interval=5s --stall-timeout=30s --warmup=5s --tunnels=1" {
		t.Errorf("image %q args %q", c.Image, c.Args)
	}
	e := env(pod)
	if e["PGSSLMODE"].Value != "disable" || e["PGHOST"].Value != "pg-rw" || e["PGPORT"].Value != "5432" {
		t.Errorf("connection env %v", e)
	}
	ref := e["PGPASSWORD"].ValueFrom
	if ref == nil || ref.SecretKeyRef.Name != "pg-app" || ref.SecretKeyRef.Key != "password" || e["PGPASSWORD"].Value != "" {
		t.Errorf("the password must come from the Secret by reference: %+v", e["PGPASSWORD"])
	}
	if _, ok := e["PGSSLROOTCERT"]; ok || len(pod.Volumes) != 1 {
		t.Errorf("direct mounts nothing but /tmp: volumes %v", pod.Volumes)
	}
}

func TestJobTransportsAndRunnerOverrides(t *testing.T) {
	tests := []struct {
		name      string
		tb        *benchv1.TunnelBenchmark
		transport benchv1.TransportSpec
		check     func(t *testing.T, pod *corev1.PodSpec)
	}{
		{
			name:      "tls verify-full mounts the server CA",
			tb:        benchmark(nil),
			transport: benchv1.TransportSpec{Name: "tls", Type: "tls"},
			check: func(t *testing.T, pod *corev1.PodSpec) {
				e := env(pod)
				if e["PGSSLMODE"].Value != "verify-full" || e["PGSSLROOTCERT"].Value != CADir+"/ca.crt" {
					t.Errorf("env %v", e)
				}
				if len(pod.Volumes) != 2 || pod.Volumes[1].Secret.SecretName != "pg-ca" {
					t.Errorf("volumes %+v", pod.Volumes)
				}
			},
		},
		{
			name:      "tls require does not mount the CA (libpq would verify it)",
			tb:        benchmark(nil),
			transport: benchv1.TransportSpec{Name: "tls", Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "require"}},
			check: func(t *testing.T, pod *corev1.PodSpec) {
				if _, ok := env(pod)["PGSSLROOTCERT"]; ok || len(pod.Volumes) != 1 {
					t.Errorf("require must not mount a CA: %v", pod.Volumes)
				}
			},
		},
		{
			name: "tls with a client certificate",
			tb:   benchmark(nil),
			transport: benchv1.TransportSpec{Name: "mtls", Type: "tls", TLS: &benchv1.TLSTransport{
				SSLMode: "verify-ca", ClientCertSecret: &benchv1.LocalObjectReference{Name: "client-tls"}}},
			check: func(t *testing.T, pod *corev1.PodSpec) {
				e := env(pod)
				if e["PGSSLCERT"].Value != ClientCertDir+"/tls.crt" || e["PGSSLKEY"].Value != ClientCertDir+"/tls.key" {
					t.Errorf("env %v", e)
				}
				v := pod.Volumes[len(pod.Volumes)-1]
				if v.Secret.SecretName != "client-tls" || *v.Secret.DefaultMode&0o007 != 0 {
					t.Errorf("client key volume %+v must not be world-readable", v)
				}
			},
		},
		{
			name: "inline script and runner placement",
			tb: benchmark(func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "select 1;"
				tb.Spec.Runner = &benchv1.RunnerSpec{Image: "custom:2", NodeSelector: map[string]string{"zone": "a"},
					Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
			}),
			transport: benchv1.TransportSpec{Name: "direct", Type: "direct"},
			check: func(t *testing.T, pod *corev1.PodSpec) {
				c := pod.Containers[0]
				if env(pod)[runspec.ScriptEnv].Value != "select 1;" || !slices.Contains(c.Args, "--script") ||
					strings.Contains(strings.Join(c.Args, " "), "--builtin") {
					t.Errorf("script not passed: args %v", c.Args)
				}
				if c.Image != "custom:2" || pod.NodeSelector["zone"] != "a" || c.Resources.Requests.Cpu().String() != "2" {
					t.Errorf("runner overrides ignored: image %s nodeSelector %v resources %v", c.Image, pod.NodeSelector, c.Resources)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, build(t, tt.tb, tt.transport))
		})
	}
}

func TestJobNameStaysAValidLabel(t *testing.T) {
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) { tb.Name = strings.Repeat("b", 60) })
	a, b := tb.JobName("direct"), tb.JobName("direct-2")
	if len(a) > 63 || len(b) > 63 || a == b || a != tb.JobName("direct") {
		t.Errorf("job names %q %q", a, b)
	}
}

// TestRunFor: what the operator tells the runner for each kind of Job, and that the Job's args
// carry exactly that to the runner's parser.
func TestRunFor(t *testing.T) {
	tx := int32(200)
	tests := []struct {
		name      string
		tb        *benchv1.TunnelBenchmark
		transport benchv1.TransportSpec
		init      bool
		want      runspec.Run
	}{
		{
			name: "initialization: the scale, no load, no storm",
			tb: benchmark(func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Scale, tb.Spec.Load.ConnectionStorm = 10, &benchv1.ConnectionStorm{Connections: 100}
			}),
			transport: benchv1.TransportSpec{Name: "direct", Type: "direct"},
			init:      true,
			want:      runspec.Run{Init: true, Scale: 10, WaitTimeout: time.Minute, Tunnels: 1},
		},
		{
			name: "direct load with a storm",
			tb: benchmark(func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Transactions, tb.Spec.Load.Reconnect = &tx, true
				tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 100}
				tb.Spec.Load.Warmup = &metav1.Duration{Duration: 0}
			}),
			transport: benchv1.TransportSpec{Name: "direct", Type: "direct"},
			want: runspec.Run{WaitTimeout: time.Minute, Tunnels: 1, Storm: 100, Load: runspec.Load{Builtin: "select-only",
				Protocol: "simple", Clients: 4, Threads: 2, Transactions: 200, Reconnect: true, ProgressInterval: 5 * time.Second,
				StallTimeout: benchv1.DefaultStallTimeout}},
		},
		{
			name:      "ssh: the tunnels, their ports and logs, the gateway's CPU",
			tb:        benchmark(nil),
			transport: benchv1.TransportSpec{Name: "ssh", Type: "ssh", SSH: &benchv1.SSHTransport{Tunnels: 3}},
			want: runspec.Run{WaitTimeout: time.Minute, Warmup: benchv1.DefaultWarmup, Tunnels: 3,
				TunnelPort: runspec.TunnelBasePort, SSHLogDir: runspec.SSHLogDir,
				CPUParts: []runspec.CPUPart{{Name: GatewayPart, Host: "bench-ssh-gateway-fe1bde.db.svc", Port: runspec.PeerCPUPort}},
				Load: runspec.Load{Builtin: "select-only", Protocol: "simple", Clients: 4, Threads: 2, Duration: time.Minute,
					ProgressInterval: 5 * time.Second, StallTimeout: benchv1.DefaultStallTimeout}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, run := job(t, tt.tb, tt.transport, tt.init)
			if !reflect.DeepEqual(run, tt.want) {
				t.Fatalf("the runner's contract:\n got %+v\nwant %+v", run, tt.want)
			}
			args := job.Spec.Template.Spec.Containers[0].Args
			if len(args) == 0 || args[0] != "run" {
				t.Fatalf("runner args %q", args)
			}
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := runspec.BindFlags(fs)
			if err := fs.Parse(args[1:]); err != nil {
				t.Fatal(err)
			}
			if got, err := f.Run(); err != nil || !reflect.DeepEqual(got, run) {
				t.Errorf("the runner reads %+v (%v) from %q, want %+v", got, err, args, run)
			}
		})
	}
}

// TestHelpersHaveMemoryLimits: every container the operator adds next to pgbench or the server (a
// tunnel, sshd, PgBouncer, the link emulator) has a memory limit above its request, and no CPU
// limit.
func TestHelpersHaveMemoryLimits(t *testing.T) {
	rtt := &metav1.Duration{Duration: 10 * time.Millisecond}
	var containers []corev1.Container
	for _, tr := range []benchv1.TransportSpec{
		{Name: "ssh", Type: "ssh", SSH: &benchv1.SSHTransport{Tunnels: 2}},
		{Name: "pooler", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: benchv1.PoolerSidecar}},
	} {
		pod := build(t, benchmark(nil), tr)
		containers = append(containers, pod.InitContainers...)
	}
	// The SSH gateway's sshd, as its peers are built.
	ssh := benchv1.TransportSpec{Name: "ssh", Type: "ssh"}
	gateway, err := forSpec(t, benchmark(nil), ssh).Peers()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gateway {
		if dep, ok := p.Object.(*appsv1.Deployment); ok {
			containers = append(containers, dep.Spec.Template.Spec.Containers...)
		}
	}
	// The userspace link emulator joins the runner pod as the controller builds it (WithLink).
	tb := benchmark(nil)
	c := Context{Benchmark: tb, Spec: tb.Spec.Transports[0], Server: server, Defaults: defaults,
		Link: benchv1.Link{RTT: rtt.Duration, Emulator: benchv1.EmulatorUserspace}}
	pod, _ := linkedPod(t, c)
	containers = append(containers, pod.Sidecars...)
	if len(containers) < 5 {
		t.Fatalf("only %d helper containers built", len(containers))
	}
	for _, c := range containers {
		limit, ok := c.Resources.Limits[corev1.ResourceMemory]
		request := c.Resources.Requests[corev1.ResourceMemory]
		if !ok || limit.Cmp(request) <= 0 {
			t.Errorf("%s: memory limit %v, request %v", c.Name, limit.String(), request.String())
		}
		if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
			t.Errorf("%s has a CPU limit", c.Name)
		}
	}
}
