package transport

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// MeasureSidecars has every sidecar of the runner pod (tunnels, the link proxy, a sidecar pooler)
// run under `tunnelbench-runner sidecar`, which serves its container's CPU accounting on a
// loopback port of its own, and tells the runner to sample each one at the ends of its measured
// window: one place for every transport, after the pod is complete. Part names are the
// containers' names.
func MeasureSidecars(pod *specs.Pod, run *runspec.Run) {
	for i := range pod.Sidecars {
		c := &pod.Sidecars[i]
		port := runspec.CPUStatsBasePort + i
		args := slices.Concat([]string{"sidecar", "--cpu-port=" + strconv.Itoa(port), "--"}, c.Command, c.Args)
		c.Command, c.Args = []string{"tunnelbench-runner"}, args
		run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: c.Name, Port: port})
	}
}

// ServePeerCPU has a peer's container (sshd, a shared PgBouncer) run under the same wrapper,
// serving its container's accounting on runspec.PeerCPUPort of the pod's address: a container
// port, so that the peer's NetworkPolicy admits the runner pods on it.
func ServePeerCPU(c *corev1.Container) {
	c.Args = slices.Concat([]string{"sidecar", "--cpu-listen=:" + strconv.Itoa(runspec.PeerCPUPort), "--"}, c.Command, c.Args)
	c.Command = []string{"tunnelbench-runner"}
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: "cpu", ContainerPort: runspec.PeerCPUPort})
}

// PeerCPUServicePort is a peer Service's port for it.
func PeerCPUServicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: "cpu", Port: runspec.PeerCPUPort, TargetPort: intstr.FromInt32(runspec.PeerCPUPort),
		Protocol: corev1.ProtocolTCP}
}

// GatewayPart is a gateway's part of the path in a run's cost: the SSH gateway's, or a VPN's.
const GatewayPart = "gateway"
