package specs

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/sshkeys"
	"github.com/tunnelbench/tunnelbench/internal/sshtunnel"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// GatewayComponent is the component label of the SSH gateway.
const GatewayComponent = "ssh-gateway"

// gatewayKeyDir is where the gateway mounts its host key and authorized_keys.
const gatewayKeyDir = "/etc/tunnelbench/ssh-gateway"

// GatewayFor returns the name and DNS name of a benchmark's SSH gateway.
func GatewayFor(tb *benchv1.TunnelBenchmark) transport.SSHGateway {
	name := tb.GatewayName()
	return transport.SSHGateway{Name: name, Host: fmt.Sprintf("%s.%s.svc", name, tb.Namespace)}
}

func gatewayLabels(tb *benchv1.TunnelBenchmark) map[string]string {
	l := Labels(tb, GatewayComponent)
	l[benchv1.LabelComponent] = GatewayComponent
	return l
}

func ownedMeta(tb *benchv1.TunnelBenchmark, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: tb.Namespace, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tb, benchv1.GroupVersion.WithKind("TunnelBenchmark"))},
	}
}

// GatewaySecret holds the benchmark's SSH key material: the gateway mounts the host key and
// authorized_keys, the runner pods the client key and known_hosts.
func GatewaySecret(tb *benchv1.TunnelBenchmark, m *sshkeys.Material) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: ownedMeta(tb, tb.GatewayName(), gatewayLabels(tb)),
		Type:       corev1.SecretTypeOpaque,
		Data:       m.SecretData(),
	}
}

// GatewayService exposes the gateway's sshd.
func GatewayService(tb *benchv1.TunnelBenchmark) *corev1.Service {
	labels := gatewayLabels(tb)
	return &corev1.Service{
		ObjectMeta: ownedMeta(tb, tb.GatewayName(), labels),
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports: []corev1.ServicePort{{Name: "ssh", Port: sshtunnel.GatewayPort,
				TargetPort: intstr.FromInt32(sshtunnel.GatewayPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// GatewayDeployment runs OpenSSH's sshd, unprivileged and hardened (sshtunnel.Gateway), next to
// the server: with a CloudNativePG server it prefers the node of the cluster's pods.
func GatewayDeployment(tb *benchv1.TunnelBenchmark, target string, defaults RunnerDefaults) *appsv1.Deployment {
	labels := gatewayLabels(tb)
	image, pullPolicy := runnerImage(tb, defaults)
	gw := sshtunnel.Gateway{
		HostKeyFile: gatewayKeyDir + "/" + sshkeys.HostKey, AuthorizedKeysFile: gatewayKeyDir + "/" + sshkeys.AuthorizedKeys,
		PermitOpen: target, Port: sshtunnel.GatewayPort,
	}
	sshd := corev1.Container{
		Name: "sshd", Image: image, ImagePullPolicy: pullPolicy,
		Command:        []string{"/usr/sbin/sshd"},
		Args:           gw.SSHDArgs(),
		Ports:          []corev1.ContainerPort{{Name: "ssh", ContainerPort: sshtunnel.GatewayPort}},
		ReadinessProbe: tcpReadiness(sshtunnel.GatewayPort),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
		SecurityContext: restrictedContainerSecurity(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "keys", MountPath: gatewayKeyDir, ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
		},
	}
	keys := corev1.Volume{Name: "keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: tb.GatewayName(), DefaultMode: ptr.To[int32](0o440),
		Items: []corev1.KeyToPath{
			{Key: sshkeys.HostKey, Path: sshkeys.HostKey},
			{Key: sshkeys.AuthorizedKeys, Path: sshkeys.AuthorizedKeys},
		}}}}
	return serverSideDeployment(tb, tb.GatewayName(), labels, sshd, keys)
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

// serverSideDeployment is a single-replica Deployment the operator runs next to the server for a
// benchmark (the SSH gateway, a pooler): restricted, without API access, and with a memory-backed
// /tmp besides the given volumes.
func serverSideDeployment(tb *benchv1.TunnelBenchmark, name string, labels map[string]string, c corev1.Container,
	volumes ...corev1.Volume) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: ownedMeta(tb, name, labels),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					Affinity:                      nearServer(tb),
					SecurityContext:               restrictedPodSecurity(),
					Containers:                    []corev1.Container{c},
					Volumes: append([]corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{
						EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}, volumes...),
				},
			},
		},
	}
}

// tcpReadiness is ready once the port accepts connections.
func tcpReadiness(port int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}},
		PeriodSeconds: 2,
	}
}
