package specs

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/pgbouncer"
	"github.com/tunnelbench/tunnelbench/internal/pki"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// PoolerComponent is the component label of a pooler transport's PgBouncer.
const PoolerComponent = "pooler"

// CNPGPoolerGVK is CloudNativePG's Pooler kind. It is handled as unstructured data so that the
// operator needs neither CloudNativePG's Go module nor its CRDs unless a benchmark uses them.
var CNPGPoolerGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Pooler"}

// PoolerFor returns where a pooler transport's shared pooler is reached: a CloudNativePG Pooler
// for a CloudNativePG server, the operator's own PgBouncer otherwise.
func PoolerFor(tb *benchv1.TunnelBenchmark, t benchv1.TransportSpec) transport.PoolerEndpoint {
	name := tb.PoolerName(t.Name)
	ep := transport.PoolerEndpoint{
		Name: name, Host: fmt.Sprintf("%s.%s.svc", name, tb.Namespace),
		CNPG: tb.Spec.Server.CNPGClusterName(tb) != "" && t.EffectivePooler().Placement == benchv1.PoolerService,
	}
	if ep.CNPG {
		ep.MetricsHost = fmt.Sprintf("%s.%s.svc", CNPGPoolerMetricsServiceName(name), tb.Namespace)
	}
	return ep
}

func poolerLabels(tb *benchv1.TunnelBenchmark, transportName string) map[string]string {
	l := Labels(tb, transportName)
	l[benchv1.LabelComponent] = PoolerComponent
	return l
}

// PoolerTLSSecret holds the certificate the pooler presents to clients, signed by a CA made for
// this pooler alone (ca.crt is kept for clients that want to verify it).
func PoolerTLSSecret(tb *benchv1.TunnelBenchmark, t benchv1.TransportSpec, ca, cert *pki.KeyPair) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: ownedMeta(tb, tb.PoolerName(t.Name), poolerLabels(tb, t.Name)),
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey: cert.CertPEM, corev1.TLSPrivateKeyKey: cert.KeyPEM, "ca.crt": ca.CertPEM,
		},
	}
}

// PoolerService exposes the operator's PgBouncer on PostgreSQL's port.
func PoolerService(tb *benchv1.TunnelBenchmark, t benchv1.TransportSpec) *corev1.Service {
	labels := poolerLabels(tb, t.Name)
	return &corev1.Service{
		ObjectMeta: ownedMeta(tb, tb.PoolerName(t.Name), labels),
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports: []corev1.ServicePort{{Name: "pgbouncer", Port: transport.PoolerServicePort,
				TargetPort: intstr.FromInt32(transport.PoolerListenPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// PoolerDeployment runs the operator's PgBouncer next to the server, as the gateway does.
func PoolerDeployment(tb *benchv1.TunnelBenchmark, t benchv1.TransportSpec, pb transport.PgBouncer,
	defaults RunnerDefaults) *appsv1.Deployment {
	labels := poolerLabels(tb, t.Name)
	image, pullPolicy := runnerImage(tb, defaults)
	c := pgbouncerContainer(pb, image, pullPolicy)
	c.Ports = []corev1.ContainerPort{{Name: "pgbouncer", ContainerPort: transport.PoolerListenPort}}
	c.ReadinessProbe = tcpReadiness(transport.PoolerListenPort)
	return serverSideDeployment(tb, tb.PoolerName(t.Name), labels, c, pb.Volumes...)
}

// pgbouncerContainer runs `tunnelbench-runner pgbouncer`, which writes PgBouncer's configuration
// into the pod's memory-backed /tmp and becomes PgBouncer.
func pgbouncerContainer(pb transport.PgBouncer, image string, pullPolicy corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name: "pgbouncer", Image: image, ImagePullPolicy: pullPolicy,
		Command: []string{"tunnelbench-runner"},
		Args:    pb.Args(),
		Env:     append([]corev1.EnvVar{{Name: "HOME", Value: "/tmp"}}, pb.Env...),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
		SecurityContext: restrictedContainerSecurity(),
		VolumeMounts:    append([]corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}, pb.Mounts...),
	}
}

// poolerSidecar is the operator's PgBouncer as a native sidecar of the runner pod: pgbench starts
// once it accepts connections, and the kubelet stops it when pgbench has ended.
func poolerSidecar(pb *transport.PgBouncer, image string, pullPolicy corev1.PullPolicy) []corev1.Container {
	if pb == nil {
		return nil
	}
	c := pgbouncerContainer(*pb, image, pullPolicy)
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	c.StartupProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			"tunnelbench-runner", "probe", "127.0.0.1:" + strconv.Itoa(transport.PoolerListenPort)}}},
		PeriodSeconds: 1, FailureThreshold: 60,
	}
	return []corev1.Container{c}
}

// CNPGPooler is the CloudNativePG Pooler of a pooler transport against a CloudNativePG server:
// CloudNativePG runs PgBouncer with its own authentication (auth_query with a client certificate)
// and TLS to the server; the benchmark sets the pool.
func CNPGPooler(tb *benchv1.TunnelBenchmark, t benchv1.TransportSpec) *unstructured.Unstructured {
	p := t.EffectivePooler()
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"cluster":   map[string]any{"name": tb.Spec.Server.CNPGClusterName(tb)},
			"instances": int64(1),
			"type":      "rw",
			"pgbouncer": map[string]any{
				"poolMode": p.PoolMode,
				"parameters": map[string]any{
					"default_pool_size": strconv.Itoa(int(p.PoolSize)),
					"max_client_conn":   strconv.Itoa(int(p.MaxClientConnections)),
				},
			},
		},
	}}
	u.SetGroupVersionKind(CNPGPoolerGVK)
	meta := ownedMeta(tb, tb.PoolerName(t.Name), poolerLabels(tb, t.Name))
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	u.SetOwnerReferences(meta.OwnerReferences)
	return u
}

// CNPGPoolerMetricsServiceName is the headless Service of a CloudNativePG Pooler's exporters.
func CNPGPoolerMetricsServiceName(pooler string) string { return pooler + "-metrics" }

// CNPGPoolerMetricsService is a headless Service over a CloudNativePG Pooler's pods (CloudNativePG
// labels them cnpg.io/poolerName), so that the runner can read each pod's PgBouncer exporter: the
// pooler's evidence, since its admin console is not open to the application's user.
func CNPGPoolerMetricsService(tb *benchv1.TunnelBenchmark, t benchv1.TransportSpec) *corev1.Service {
	name := tb.PoolerName(t.Name)
	return &corev1.Service{
		ObjectMeta: ownedMeta(tb, CNPGPoolerMetricsServiceName(name), poolerLabels(tb, t.Name)),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"cnpg.io/poolerName": name},
			Ports: []corev1.ServicePort{{Name: "metrics", Port: pgbouncer.CNPGExporterPort,
				TargetPort: intstr.FromInt32(pgbouncer.CNPGExporterPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}
