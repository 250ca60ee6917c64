package transport

import (
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// Hop is the part of a transport's path that crosses the emulated link: the client side in the
// runner pod dials Host:Port, the link's far end.
type Hop struct {
	Host string
	Port int32
	// What names the hop for the status: "pgbench → server".
	What string
}

// Address is the hop's far end as host:port.
func (h Hop) Address() string { return net.JoinHostPort(h.Host, strconv.Itoa(int(h.Port))) }

// ServerHop is the hop to the server itself.
func ServerHop(s Server, what string) Hop { return Hop{Host: s.Host, Port: s.Port, What: what} }

// linkHost is where the link proxy listens in the runner pod.
const linkHost = "127.0.0.1"

// LinkContainer is the name of the link emulator's sidecar in the runner pod.
const LinkContainer = "link"

// userspaceLink reports whether the transport's hop passes the link proxy in the runner pod.
func (c Context) userspaceLink() bool {
	return c.Link.Emulated() && c.Link.Emulator == benchv1.EmulatorUserspace
}

// Dial is where the client side of the hop connects: the link proxy's loopback end when the
// userspace link is on the path, the hop's far end otherwise.
func (c Context) Dial(h Hop) (string, int32) {
	if c.userspaceLink() {
		return linkHost, runspec.LinkPort
	}
	return h.Host, h.Port
}

// LibPQVia points libpq's settings, made for the hop's far end, at the link proxy: PGHOSTADDR is
// where libpq connects while PGHOST stays the name TLS verifies (verify-full keeps checking the
// server's or the pooler's certificate against its own name).
func (c Context) LibPQVia(p *specs.Pod) {
	if !c.userspaceLink() {
		return
	}
	for i := range p.Env {
		if p.Env[i].Name == "PGPORT" {
			p.Env[i].Value = strconv.Itoa(runspec.LinkPort)
		}
	}
	p.Env = append(p.Env, corev1.EnvVar{Name: "PGHOSTADDR", Value: linkHost})
}

// WithLink completes a transport's runner pod with its emulated link: with the userspace
// emulator, the link proxy as the first native sidecar (the tunnels and the pooler that dial
// through it start after it); with chaos-mesh, the runner's wait for it; and in every case what
// the runner measures the path against.
func WithLink(c Context, tr Transport, pod *specs.Pod, run *runspec.Run) {
	if !c.Link.Emulated() {
		return
	}
	run.Link = runspec.Link{RTT: c.Link.RTT, Jitter: c.Link.Jitter, BitsPerSecond: c.Link.BitsPerSecond}
	if !c.userspaceLink() {
		// chaos-mesh acts on the pod from outside once it runs: the runner waits for it.
		run.AwaitLink = true
		return
	}
	stats := net.JoinHostPort(linkHost, strconv.Itoa(runspec.LinkStatsPort))
	proxy := runspec.LinkProxy{Listen: net.JoinHostPort(linkHost, strconv.Itoa(runspec.LinkPort)),
		Upstream: tr.Hop().Address(), Link: run.Link, Stats: stats}
	// How long the link held the load's data: its share of the round trip's budget.
	run.Probes = append(run.Probes, runspec.Probe{Name: runspec.LinkProbe, URL: "http://" + stats + "/"})
	image, pullPolicy := specs.RunnerImage(c.Benchmark, c.Defaults)
	// A CPU request of its own: the proxy copies every byte of the load.
	sidecar := specs.HelperContainer(LinkContainer, image, pullPolicy, "250m", "32Mi", "256Mi")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	sidecar.Command, sidecar.Args = []string{"tunnelbench-runner"}, append([]string{"link"}, proxy.Args()...)
	sidecar.StartupProbe = specs.StartupProbe(runspec.LinkPort)
	pod.Sidecars = append([]corev1.Container{sidecar}, pod.Sidecars...)
}

// LinkHeld is how long the emulated link held the load's data between the runner's reads at the
// load's ends (runspec.LinkProbe), from the link's own counters; false without them.
func LinkHeld(rep *report.Report) (time.Duration, bool) {
	pr := rep.ProbeNamed(runspec.LinkProbe)
	if pr == nil || pr.Error != "" {
		return 0, false
	}
	before, errBefore := runspec.ParseLinkHeld(pr.Before)
	after, errAfter := runspec.ParseLinkHeld(pr.After)
	if errBefore != nil || errAfter != nil || after < before {
		return 0, false
	}
	return after - before, true
}
