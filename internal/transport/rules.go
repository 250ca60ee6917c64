package transport

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Rules are what a transport type says of the benchmarks that use it, checked in Go where the
// CRD's CEL would have to name transport types: at admission (the webhook, through
// admission.Policy.Refusals) and again by the reconciler before anything runs, the way
// CloudNativePG's webhook and its reconciler guard a Cluster. The CRD keeps the simple bounds.
// Each type registers its rules from its own file (RegisterRules): a new transport states what
// it can carry and adds its own checks there, and edits no shared rule.
type Rules struct {
	// CarriesPooler: a sidecar pooler may reach the server over this transport's path
	// (pooler.over names it).
	CarriesPooler bool
	// Packets: the path carries packets, not one TCP stream (a VPN's UDP), which the userspace
	// link emulator, a TCP proxy, cannot carry.
	Packets bool
	// PoolsServerConnections: the transport's clients reach the server through a pool of its own,
	// so they do not count against the server's max_connections.
	PoolsServerConnections bool
	// Sweeps is the spec.sweep parameter that sweeps a setting of this type ("tunnels" for ssh,
	// "poolSize" for pooler): such a sweep needs a transport of the type.
	Sweeps string
	// Check is the type's own cross-field checks of transport i of spec, named at path (the
	// transport's, spec.transports[i]).
	Check func(spec *benchv1.TunnelBenchmarkSpec, i int, path *field.Path) field.ErrorList
}

var rules = map[benchv1.TransportType]Rules{}

// RegisterRules records a transport type's rules; each transport's file calls it from init.
func RegisterRules(t benchv1.TransportType, r Rules) {
	if _, dup := rules[t]; dup {
		panic(fmt.Sprintf("transport type %q has its rules registered twice", t))
	}
	rules[t] = r
}

// typesWith are the types whose rules have, sorted, as "proxy, ssh or vpn".
func typesWith(has func(Rules) bool) string {
	var out []string
	for t, r := range rules {
		if has(r) {
			out = append(out, string(t))
		}
	}
	slices.Sort(out)
	if len(out) < 2 {
		return strings.Join(out, "")
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

// Validate is every cross-field rule of spec that depends on what its transports can do: each
// transport's own checks, and the shared rules worded by capability (Rules), never by type.
func Validate(spec *benchv1.TunnelBenchmarkSpec) field.ErrorList {
	var errs field.ErrorList
	transports := field.NewPath("spec", "transports")
	for i, t := range spec.Transports {
		path := transports.Index(i)
		errs = append(errs, poolerOverRules(spec, t, path)...)
		errs = append(errs, packetsRules(spec, t, path)...)
		if check := rules[t.Type].Check; check != nil {
			errs = append(errs, check(spec, i, path)...)
		}
	}
	errs = append(errs, maxConnectionsRule(spec)...)
	errs = append(errs, sweepRules(spec)...)
	return append(errs, runnerPodsRule(spec)...)
}

// poolerOverRules: pooler.over names a transport of the benchmark that can carry a pooler.
func poolerOverRules(spec *benchv1.TunnelBenchmarkSpec, t benchv1.TransportSpec, path *field.Path) field.ErrorList {
	if t.Pooler == nil || t.Pooler.Over == "" {
		return nil
	}
	if over := named(spec, t.Pooler.Over); over != nil && rules[over.Type].CarriesPooler {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child("pooler", "over"), t.Pooler.Over, fmt.Sprintf(
		"pooler.over must name a transport of this benchmark of type %s",
		typesWith(func(r Rules) bool { return r.CarriesPooler })))}
}

// packetsRules: a path of packets (its own, or the one its pooler rides over) never crosses the
// userspace link emulator, which proxies TCP.
func packetsRules(spec *benchv1.TunnelBenchmarkSpec, t benchv1.TransportSpec, path *field.Path) field.ErrorList {
	packets := rules[t.Type].Packets
	if t.Pooler != nil && t.Pooler.Over != "" {
		if over := named(spec, t.Pooler.Over); over != nil && rules[over.Type].Packets {
			packets = true
		}
	}
	if !packets || !UserspaceLink(spec, t) {
		return nil
	}
	return field.ErrorList{field.Invalid(networkPath(t, path), "userspace", fmt.Sprintf(
		"the userspace link emulator is a TCP proxy and cannot carry a %s transport's packets, nor a pooler's over one: "+
			"set network.emulator chaos-mesh for it", t.Type))}
}

// maxConnectionsRule: a managed server keeps 3 of its max_connections for superusers, so the
// clients of the transports that reach it directly must fit in the rest.
func maxConnectionsRule(spec *benchv1.TunnelBenchmarkSpec) field.ErrorList {
	m := spec.Server.Managed
	if m == nil || !slices.ContainsFunc(spec.Transports, func(t benchv1.TransportSpec) bool {
		return !rules[t.Type].PoolsServerConnections
	}) {
		return nil
	}
	limit := 100
	if v, ok := m.Parameters["max_connections"]; ok && maxConnectionsValue.MatchString(v) {
		limit, _ = strconv.Atoi(v)
	}
	if clients := MaxClients(spec); int(clients) > limit-3 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "load", "clients"), clients, fmt.Sprintf(
			"spec.load.clients must leave 3 of the managed server's max_connections (%d: spec.server.managed.parameters, "+
				"default 100) to superusers: raise max_connections or lower clients (every point of spec.sweep.clients)", limit))}
	}
	return nil
}

var maxConnectionsValue = regexp.MustCompile(`^[0-9]{1,6}$`)

// sweepRules: a sweep of a type's own setting needs a transport of that type.
func sweepRules(spec *benchv1.TunnelBenchmarkSpec) field.ErrorList {
	s := spec.Sweep
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	for _, p := range []struct {
		name, setting string
		values        []int32
	}{{"tunnels", "ssh.tunnels", s.Tunnels}, {"poolSize", "pooler.poolSize", s.PoolSize}} {
		if len(p.values) == 0 || slices.ContainsFunc(spec.Transports, func(t benchv1.TransportSpec) bool {
			return rules[t.Type].Sweeps == p.name
		}) {
			continue
		}
		errs = append(errs, field.Invalid(field.NewPath("spec", "sweep", p.name), p.values, fmt.Sprintf(
			"spec.sweep.%s needs a transport of type %s: it sweeps their %s", p.name,
			typesWith(func(r Rules) bool { return r.Sweeps == p.name }), p.setting)))
	}
	return errs
}

// runnerPodsRule: several runner pods share the clients, each at least one per tunnel, and a copy
// runs in one pod.
func runnerPodsRule(spec *benchv1.TunnelBenchmarkSpec) field.ErrorList {
	if spec.Runner == nil || spec.Runner.Pods <= 1 {
		return nil
	}
	pods := spec.Runner.Pods
	msg := "every pod needs at least one client per tunnel (spec.load.clients, at every point of a sweep, at least " +
		"pods × ssh.tunnels), and a copy load runs in one pod"
	if spec.Load.Copy != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "runner", "pods"), pods, msg)}
	}
	for _, t := range spec.Transports {
		if pods*Tunnels(spec, t) > MinClients(spec) {
			return field.ErrorList{field.Invalid(field.NewPath("spec", "runner", "pods"), pods, msg)}
		}
	}
	return nil
}

// named is the benchmark's transport of that name, nil when there is none.
func named(spec *benchv1.TunnelBenchmarkSpec, name string) *benchv1.TransportSpec {
	for i := range spec.Transports {
		if spec.Transports[i].Name == name {
			return &spec.Transports[i]
		}
	}
	return nil
}

// networkOf is the link a transport's runs cross: its own network, else the benchmark's.
func networkOf(spec *benchv1.TunnelBenchmarkSpec, t benchv1.TransportSpec) *benchv1.NetworkSpec {
	if t.Network != nil {
		return t.Network
	}
	return spec.Network
}

// networkPath is where the link of a transport is set: its own network, else the benchmark's.
func networkPath(t benchv1.TransportSpec, path *field.Path) *field.Path {
	if t.Network != nil {
		return path.Child("network", "emulator")
	}
	return field.NewPath("spec", "network", "emulator")
}

// UserspaceLink reports whether a transport's runs cross a link the userspace emulator (a TCP
// proxy in the runner pod) emulates.
func UserspaceLink(spec *benchv1.TunnelBenchmarkSpec, t benchv1.TransportSpec) bool {
	n := networkOf(spec, t)
	return n != nil && (n.RTT != nil || n.Bandwidth != "") && (n.Emulator == "" || n.Emulator == benchv1.EmulatorUserspace)
}

// MaxClients is the most clients any run of spec has: the largest point of a clients sweep, else
// spec.load.clients.
func MaxClients(spec *benchv1.TunnelBenchmarkSpec) int32 {
	if spec.Sweep != nil && len(spec.Sweep.Clients) > 0 {
		return slices.Max(spec.Sweep.Clients)
	}
	return spec.Load.Clients
}

// MinClients is the fewest clients any run of spec has.
func MinClients(spec *benchv1.TunnelBenchmarkSpec) int32 {
	if spec.Sweep != nil && len(spec.Sweep.Clients) > 0 {
		return slices.Min(spec.Sweep.Clients)
	}
	return spec.Load.Clients
}

// Tunnels is the most tunnels (each its own pgbench) a transport's runs of spec open from one
// pod: the largest point of a tunnels sweep for the type it sweeps, else its ssh.tunnels, else 1.
func Tunnels(spec *benchv1.TunnelBenchmarkSpec, t benchv1.TransportSpec) int32 {
	if spec.Sweep != nil && len(spec.Sweep.Tunnels) > 0 && rules[t.Type].Sweeps == "tunnels" {
		return slices.Max(spec.Sweep.Tunnels)
	}
	if t.SSH != nil && t.SSH.Tunnels > 0 {
		return t.SSH.Tunnels
	}
	return 1
}
