package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NetworkEmulator is what emulates a link.
// +kubebuilder:validation:Enum=userspace;chaos-mesh
type NetworkEmulator string

const (
	// EmulatorUserspace is a TCP proxy in the runner pod (a native sidecar, no privileges): it
	// works on every cluster and kernel; latency, jitter and bandwidth, no packet loss.
	EmulatorUserspace NetworkEmulator = "userspace"
	// EmulatorChaosMesh is chaos-mesh NetworkChaos on the runner pod: netem and tbf in the pod's
	// network namespace, by chaos-mesh's privileged daemon. Delay needs the kernel's sch_netem.
	EmulatorChaosMesh NetworkEmulator = "chaos-mesh"
)

// NetworkSpec is an emulated link on the hop between the runner pod and the remote side of a
// transport's path (the server for direct and tls, the SSH gateway for ssh, the server for a
// sidecar pooler, the pooler's Service for a shared pooler). Without rtt and bandwidth nothing is
// emulated: `network: {}` is the LAN.
// +kubebuilder:validation:XValidation:rule="!has(self.jitter) || (has(self.rtt) && duration(self.jitter) <= duration(self.rtt))",message="network.jitter needs network.rtt and must not exceed it"
type NetworkSpec struct {
	// RTT is the round-trip time the link adds, half in each direction, and once more when a
	// connection opens (its TCP handshake crosses the link too). Between 1ms and 10s: the userspace
	// emulator cannot keep sub-millisecond delays.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1ms') && duration(self) <= duration('10s')",message="network.rtt must be between 1ms and 10s"
	// +optional
	RTT *metav1.Duration `json:"rtt,omitempty"`

	// Jitter varies the round trip uniformly by up to ±jitter. At most rtt.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="network.jitter must not be negative"
	// +optional
	Jitter *metav1.Duration `json:"jitter,omitempty"`

	// Bandwidth is the link's capacity in each direction, in bits per second with a unit: Kbit,
	// Mbit or Gbit (powers of 1000, as tc writes them), e.g. 512Kbit, 50Mbit, 1Gbit. Between 100Kbit
	// and 10Gbit. Every connection and tunnel of the transport shares it, as on a real link.
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:XValidation:rule="self.matches('^[1-9][0-9]*(Kbit|Mbit|Gbit)$')",message="network.bandwidth must be a whole number with a unit Kbit, Mbit or Gbit (bits per second, powers of 1000), e.g. 50Mbit; write 1500Kbit for 1.5Mbit"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]*(Kbit|Mbit|Gbit)$') || (self.endsWith('Kbit') ? int(self.find('^[0-9]+')) >= 100 : self.endsWith('Gbit') ? int(self.find('^[0-9]+')) <= 10 : int(self.find('^[0-9]+')) <= 10000)",message="network.bandwidth must be between 100Kbit and 10Gbit"
	// +optional
	Bandwidth string `json:"bandwidth,omitempty"`

	// Emulator is userspace (default: a proxy in the runner pod, works everywhere) or chaos-mesh
	// (NetworkChaos objects; chaos-mesh must be installed, and delay needs sch_netem on the node).
	// +optional
	Emulator NetworkEmulator `json:"emulator,omitempty"`
}

// LinkResult is a transport's emulated link: as asked, and as the runner measured it through the
// transport's own path before each run's load.
type LinkResult struct {
	// Emulator is what emulated the link.
	Emulator NetworkEmulator `json:"emulator"`
	// Hop is where the link sits on this transport's path.
	Hop string `json:"hop"`
	// Asked is the link of the spec.
	Asked LinkFigures `json:"asked"`
	// Measured is the median over the runs of what the runner measured through the transport's
	// own path before each run's load.
	// +optional
	Measured *MeasuredLink `json:"measured,omitempty"`
}

// LinkFigures are a link as asked: round-trip time and jitter in milliseconds, bandwidth in bits
// per second; zero is none.
type LinkFigures struct {
	// +optional
	RTTMs float64 `json:"rttMs,omitempty"`
	// +optional
	JitterMs float64 `json:"jitterMs,omitempty"`
	// +optional
	BitsPerSecond int64 `json:"bitsPerSecond,omitempty"`
}

// MeasuredLink is a path as the runner measured it: RTTMs the median of a few dozen `select 1`
// round trips on one connection, ConnectMs the median time to open a connection (TCP, TLS, SSH
// tunnel or pooler login included), BitsPerSecond a COPY of incompressible data (measured only
// when a bandwidth is asked).
type MeasuredLink struct {
	RTTMs     float64 `json:"rttMs"`
	ConnectMs float64 `json:"connectMs"`
	// +optional
	BitsPerSecond int64 `json:"bitsPerSecond,omitempty"`
}
