package specs

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// Component labels of what the operator makes.
const (
	// RunnerComponent marks the Jobs (and pods) that run pgbench.
	RunnerComponent = "runner"
	// ServerComponent marks a managed server: its CloudNativePG Cluster and certificate.
	ServerComponent = "server"
)

// RunnerUID is the unprivileged user the runner, and every pod the operator makes, runs as.
const RunnerUID = 65532

// Labels are the labels of a benchmark's objects: component says what the object is; transport,
// when set, that it serves only that transport (and goes when its run ends).
func Labels(tb *benchv1.TunnelBenchmark, component, transport string) map[string]string {
	l := map[string]string{
		benchv1.LabelName:      "tunnelbench",
		benchv1.LabelComponent: component,
		benchv1.LabelManagedBy: "tunnelbench-operator",
		benchv1.LabelBenchmark: tb.Name,
	}
	if transport != "" {
		l[benchv1.LabelTransport] = transport
	}
	return l
}

// OwnedMeta is the metadata of an object the operator makes for a benchmark: its labels and the
// benchmark as controller, so that garbage collection removes it with the benchmark and the
// operator recognizes it as its own.
func OwnedMeta(tb *benchv1.TunnelBenchmark, name, component, transport string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: tb.Namespace, Labels: Labels(tb, component, transport),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tb, benchv1.GroupVersion.WithKind("TunnelBenchmark"))},
	}
}

// SetMeta copies metadata onto unstructured data (the kinds of CloudNativePG and cert-manager).
func SetMeta(u *unstructured.Unstructured, m metav1.ObjectMeta) {
	u.SetName(m.Name)
	u.SetNamespace(m.Namespace)
	u.SetLabels(m.Labels)
	u.SetOwnerReferences(m.OwnerReferences)
}

// RunnerDefaults are the operator-wide settings of runner pods.
type RunnerDefaults struct {
	Image      string
	PullPolicy corev1.PullPolicy
	// WaitTimeout bounds the runner's wait for the server.
	WaitTimeout time.Duration
}

// RunnerImage is the runner's image and pull policy: the benchmark's, else the operator's. The
// pods next to the server (gateway, pooler) run it too.
func RunnerImage(tb *benchv1.TunnelBenchmark, defaults RunnerDefaults) (string, corev1.PullPolicy) {
	image, pullPolicy := defaults.Image, defaults.PullPolicy
	if r := tb.Spec.Runner; r != nil {
		if r.Image != "" {
			image = r.Image
		}
		if r.ImagePullPolicy != "" {
			pullPolicy = r.ImagePullPolicy
		}
	}
	return image, pullPolicy
}

// SecretEnv is an environment variable read from a Secret by reference: the value never appears in
// the pod spec.
func SecretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

// SecretVolume mounts selected keys of a Secret read-only. Mode 0440 with the pod's fsGroup keeps
// private keys acceptable to libpq, which refuses key files readable by others.
func SecretVolume(name, secret string, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: items, DefaultMode: ptr.To[int32](0o440),
	}}}
}

// TmpVolume is the memory-backed /tmp of the operator's pods, whose root filesystems are
// read-only: a pooler writes its auth file, which holds the password, there.
func TmpVolume() corev1.Volume {
	return corev1.Volume{Name: runspec.TmpVolume, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
}

// RestrictedPodSecurity is the restricted Pod Security Standard for the operator's pods.
func RestrictedPodSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](RunnerUID),
		RunAsGroup:     ptr.To[int64](RunnerUID),
		FSGroup:        ptr.To[int64](RunnerUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedContainerSecurity is the restricted Pod Security Standard for a container.
func RestrictedContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// HelperContainer is a container of the operator's image next to pgbench or to the server (a
// tunnel, sshd, PgBouncer): restricted, with HOME on the memory-backed /tmp, CPU and memory
// requests so that it keeps its share of a loaded node, and a memory limit so that a runaway one
// (buffers of thousands of connections) is killed rather than starve the node. No CPU limit:
// throttling would distort the latency it carries.
func HelperContainer(name, image string, pullPolicy corev1.PullPolicy, cpu, memory, memoryLimit string) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: pullPolicy,
		Env: []corev1.EnvVar{{Name: "HOME", Value: runspec.TmpMountPath}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memoryLimit)}},
		SecurityContext: RestrictedContainerSecurity(),
		VolumeMounts:    []corev1.VolumeMount{{Name: runspec.TmpVolume, MountPath: runspec.TmpMountPath}},
	}
}

// TCPReadiness is ready once the port accepts connections.
func TCPReadiness(port int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}},
		PeriodSeconds: 2,
	}
}

// StartupProbe holds the runner back until a sidecar accepts connections on the pod's loopback
// port: `tunnelbench-runner probe`, since a kubelet's TCP probe would dial the pod IP.
func StartupProbe(port int) *corev1.Probe {
	return StartupProbeAt("127.0.0.1:" + strconv.Itoa(port))
}

// StartupProbeAt holds the runner back until a sidecar's address (host:port, as the pod reaches
// it: the far end of a tunnel the sidecar routes) accepts connections.
func StartupProbeAt(addr string) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			"tunnelbench-runner", "probe", addr}}},
		PeriodSeconds: 1, FailureThreshold: 60,
	}
}

// TUNDeviceSecurity is a container that runs a TUN device (openvpn): root, with NET_ADMIN to
// configure the device, MKNOD to make its node, SETUID and SETGID for openvpn to drop to nobody
// once the device is up; nothing else, no privilege escalation, a read-only root filesystem. Not
// the restricted standard: only a namespace whose Pod Security level is privileged admits it.
func TUNDeviceSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To[int64](0),
		RunAsGroup:               ptr.To[int64](0),
		RunAsNonRoot:             ptr.To(false),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"},
			Add: []corev1.Capability{"NET_ADMIN", "MKNOD", "SETUID", "SETGID"}},
	}
}

// nearServer prefers the node of a CloudNativePG server's primary, so that the hop from the
// gateway or pooler to the server stays on one node, as where a hand-run study placed them.
func nearServer(tb *benchv1.TunnelBenchmark) *corev1.Affinity {
	cluster := tb.Spec.Server.CNPGClusterName(tb)
	if cluster == "" {
		return nil
	}
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					"cnpg.io/cluster": cluster, "cnpg.io/instanceRole": "primary"}},
			},
		}},
	}}
}

// PeerProgressDeadline bounds how long a peer Deployment may take to become available: past it,
// the Deployment controller reports ProgressDeadlineExceeded and the benchmark fails with the
// reason, instead of waiting for its timeout. It covers what the pod checks do not catch (a pod
// that runs but never turns ready); image pulls and crashes are caught sooner.
const PeerProgressDeadline = 3 * time.Minute

// ServerSideDeployment is a single-replica Deployment the operator runs next to the server for a
// benchmark (the SSH gateway, a pooler): restricted, without API access, and with a memory-backed
// /tmp besides the given volumes. Its pods carry the Deployment's labels.
func ServerSideDeployment(tb *benchv1.TunnelBenchmark, meta metav1.ObjectMeta, c corev1.Container,
	volumes ...corev1.Volume) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr.To[int32](1),
			ProgressDeadlineSeconds: ptr.To(int32(PeerProgressDeadline.Seconds())),
			Selector:                &metav1.LabelSelector{MatchLabels: meta.Labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					Affinity:                      nearServer(tb),
					SecurityContext:               RestrictedPodSecurity(),
					Containers:                    []corev1.Container{c},
					Volumes:                       append([]corev1.Volume{TmpVolume()}, volumes...),
				},
			},
		},
	}
}

// Pod is what a transport adds to the runner pod.
type Pod struct {
	// Env is libpq's settings (the credentials by reference) and what else the runner reads.
	Env     []corev1.EnvVar
	Volumes []corev1.Volume
	Mounts  []corev1.VolumeMount
	// Sidecars run next to pgbench as native sidecars (init containers that keep running):
	// tunnels, a pooler.
	Sidecars []corev1.Container
}
