// Package admission decides whether a TunnelBenchmark may be created or changed by the user who
// asks: the operator holds more privilege than the people who create benchmarks (it reads Secrets,
// hands them to pods, asks issuers for certificates, shapes pods' traffic with chaos-mesh), so a
// benchmark is admitted only when its creator could have done each of those things themselves.
//
// Required lists, from the spec alone, what the user must be allowed to do (pure, tested without
// an API server); Validator asks the API server (SubjectAccessReview) for each, as the requesting
// user, and refuses the benchmark naming the field, the verb and the object.
package admission

import (
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/chaosmesh"
)

// Access is one thing the requesting user must be allowed to do for the benchmark to be admitted.
type Access struct {
	// Field is the spec field that asks the operator to do it.
	Field *field.Path
	// Attributes are the verb and the object, as a SubjectAccessReview asks about them.
	Attributes authorizationv1.ResourceAttributes
	// Why says what the operator would do with it, for the refusal.
	Why string
}

// String names the access as a refusal does: `get` on Secret team-a/pg-app.
func (a Access) String() string {
	r := a.Attributes
	what := r.Resource
	if r.Group != "" {
		what += "." + r.Group
	}
	object := what
	switch {
	case r.Name != "" && r.Namespace != "":
		object = fmt.Sprintf("%s %s/%s", what, r.Namespace, r.Name)
	case r.Name != "":
		object = fmt.Sprintf("%s %s", what, r.Name)
	case r.Namespace != "":
		object = fmt.Sprintf("%s in namespace %s", what, r.Namespace)
	}
	return fmt.Sprintf("%q on %s", r.Verb, object)
}

// Resources the checks ask about.
const (
	cnpgGroup       = "postgresql.cnpg.io"
	certManager     = "cert-manager.io"
	verbUse         = "use"
	resourceSecrets = "secrets"
)

// Required lists what the requesting user must be allowed to do for tb, in the benchmark's
// namespace unless said otherwise:
//   - `get` every Secret the spec names (the server's credentials and CA, a client certificate):
//     the operator reads them and mounts them into the runner pod;
//   - `create` CloudNativePG Clusters, for a managed server the operator creates for them, and
//     Poolers, for a shared pooler of a CloudNativePG server;
//   - `create tunnelbenchmarks` in another namespace whose Service is the server;
//   - `create` cert-manager Certificates when spec.tls names an issuer, and `use` the
//     ClusterIssuer when it is one: a ClusterIssuer signs for every namespace, so naming one is a
//     privilege its administrator grants by name, as PodSecurityPolicy's `use` was;
//   - `create` chaos-mesh NetworkChaos in another namespace a chaos-mesh link would shape (its
//     far end, a Service there, gets the delay of the way back);
//   - `list` EndpointSlices for a direct transport via pod: the operator reads the server
//     Service's to connect to the pod behind it, and the pod's address lands in status.
func Required(tb *benchv1.TunnelBenchmark) ([]Access, error) {
	ns := tb.Namespace
	secrets, err := transport.UserNamedSecrets(tb)
	if err != nil {
		return nil, err
	}
	var out []Access
	for _, s := range secrets {
		out = append(out, Access{Field: s.Field, Why: "the operator reads it and mounts it into the runner pod (" + s.What + ")",
			Attributes: authorizationv1.ResourceAttributes{Verb: "get", Resource: resourceSecrets, Namespace: ns, Name: s.Name}})
	}
	if tb.Spec.Server.Managed != nil {
		out = append(out, Access{Field: field.NewPath("spec", "server", "managed"),
			Why: "the operator creates a CloudNativePG Cluster for the benchmark",
			Attributes: authorizationv1.ResourceAttributes{Verb: "create", Group: cnpgGroup,
				Resource: "clusters", Namespace: ns}})
	}
	out = append(out, issuerAccess(tb)...)
	out = append(out, cnpgPoolerAccess(tb)...)
	out = append(out, serverAccess(tb)...)
	out = append(out, serverPodAccess(tb)...)
	chaos, err := chaosAccess(tb)
	if err != nil {
		return nil, err
	}
	return append(out, chaos...), nil
}

// cnpgPoolerAccess is what a shared pooler of a CloudNativePG server needs: the operator creates a
// CloudNativePG Pooler for it in the namespace, whose PgBouncer logs in to the server as
// CloudNativePG's own pooler user.
func cnpgPoolerAccess(tb *benchv1.TunnelBenchmark) []Access {
	if tb.Spec.Server.CNPGClusterName(tb) == "" {
		return nil
	}
	for i, t := range tb.Spec.Transports {
		if t.Type == benchv1.TransportPooler && t.EffectivePooler().Placement == benchv1.PoolerService {
			return []Access{{Field: field.NewPath("spec", "transports").Index(i).Child("pooler", "placement"),
				Why: "the operator creates a CloudNativePG Pooler in the namespace for it",
				Attributes: authorizationv1.ResourceAttributes{Verb: "create", Group: cnpgGroup,
					Resource: "poolers", Namespace: tb.Namespace}}}
		}
	}
	return nil
}

// serverAccess is what naming another namespace's server needs: `create tunnelbenchmarks` in that
// namespace, the right to benchmark its servers there. A benchmark holds its server's place in
// the queue while it runs (one measurement at a time per server), so without it a user of one
// namespace could keep another team's benchmarks of their own server Queued for hours, and the
// operator would read that namespace's Service and pods on their behalf.
func serverAccess(tb *benchv1.TunnelBenchmark) []Access {
	e := tb.Spec.Server.External
	if e == nil {
		return nil
	}
	_, far, ok := chaosmesh.ServiceOf(e.Host, tb.Namespace)
	if !ok || far == tb.Namespace {
		return nil
	}
	return []Access{{Field: field.NewPath("spec", "server", "external", "host"),
		Why: fmt.Sprintf("%s is a Service of namespace %s: benchmarking a server there takes its place in that server's "+
			"queue, and the operator reads its Service and pods, so it needs the right to benchmark there "+
			"(a host outside the cluster is written with three labels or more, not as name.namespace)", e.Host, far),
		Attributes: authorizationv1.ResourceAttributes{Verb: "create", Group: benchv1.GroupVersion.Group,
			Resource: "tunnelbenchmarks", Namespace: far}}}
}

// serverPodAccess is what the first direct transport via pod needs: EndpointSlices of the
// benchmark's namespace, the only ones the operator reads.
func serverPodAccess(tb *benchv1.TunnelBenchmark) []Access {
	for i, t := range tb.Spec.Transports {
		if t.Type == benchv1.TransportDirect && t.DirectVia() == benchv1.ViaPod {
			return []Access{{Field: field.NewPath("spec", "transports").Index(i).Child("direct", "via"),
				Why: "the operator reads the server Service's EndpointSlices to connect to the pod behind it",
				Attributes: authorizationv1.ResourceAttributes{Verb: "list", Group: "discovery.k8s.io",
					Resource: "endpointslices", Namespace: tb.Namespace}}}
		}
	}
	return nil
}

// issuerAccess is what spec.tls.issuerRef needs: the Certificates the operator creates there,
// and a ClusterIssuer's `use`.
func issuerAccess(tb *benchv1.TunnelBenchmark) []Access {
	if tb.Spec.TLS == nil {
		return nil
	}
	ref := tb.Spec.TLS.IssuerRef
	f := field.NewPath("spec", "tls", "issuerRef")
	out := []Access{{Field: f, Why: "the operator asks the issuer for certificates in this namespace",
		Attributes: authorizationv1.ResourceAttributes{Verb: "create", Group: certManager,
			Resource: "certificates", Namespace: tb.Namespace}}}
	if ref.Kind == "ClusterIssuer" {
		group := ref.Group
		if group == "" {
			group = certManager
		}
		out = append(out, Access{Field: f, Why: "a ClusterIssuer signs for every namespace: naming one is granted by name",
			Attributes: authorizationv1.ResourceAttributes{Verb: verbUse, Group: group, Resource: "clusterissuers", Name: ref.Name}})
	}
	return out
}

// chaosAccess is the NetworkChaos a chaos-mesh link would put in another namespace: the far end
// of a link is the server's host, and a host of the cluster's DNS in another namespace makes the
// operator select that namespace's pods.
func chaosAccess(tb *benchv1.TunnelBenchmark) ([]Access, error) {
	e := tb.Spec.Server.External
	if e == nil {
		return nil, nil
	}
	_, far, ok := chaosmesh.ServiceOf(e.Host, tb.Namespace)
	if !ok || far == tb.Namespace {
		return nil, nil
	}
	for i, t := range tb.Spec.Transports {
		link, err := tb.NetworkFor(t)
		if err != nil {
			return nil, err
		}
		if link.Emulator != benchv1.EmulatorChaosMesh || !link.Emulated() {
			continue
		}
		f := field.NewPath("spec", "network")
		if t.Network != nil {
			f = field.NewPath("spec", "transports").Index(i).Child("network")
		}
		return []Access{{Field: f, Why: fmt.Sprintf("its link's far end, %s, is a Service of namespace %s, "+
			"whose pods the operator's NetworkChaos would shape", e.Host, far),
			Attributes: authorizationv1.ResourceAttributes{Verb: "create", Group: chaosmesh.NetworkChaosGVK.Group,
				Resource: "networkchaos", Namespace: far}}}, nil
	}
	return nil, nil
}

// Policy is what the operator's administrator allows every benchmark, set in the chart.
type Policy struct {
	// DefaultRunnerImage is the operator's own runner image, always allowed.
	DefaultRunnerImage string
	// RunnerImages are the other images spec.runner.image may name: a reference as written, or a
	// prefix ending in "*" (registry.example.com/tunnelbench/*).
	RunnerImages []string
	// AllowPrivileged admits transports whose pods are privileged (vpn.kind openvpn).
	AllowPrivileged bool
	// CreatorUnchecked is true when no admission webhook asks whether a benchmark's creator may
	// do what it names (chart value webhook.enabled: false): what reaches beyond the benchmark's
	// namespace is then refused (beyondNamespace).
	CreatorUnchecked bool
}

// Refusals are what the operator refuses in tb whoever asks, the one check the webhook makes of
// every benchmark and schedule and the reconciler again before anything runs: a spec its
// transports cannot run (transport.Validate: the cross-field rules the CRD's CEL would have to
// word by transport type), a runner image off the list (the image receives the server's password
// and keys), a privileged transport not allowed, and, with no webhook to check its creator, what
// reaches beyond its namespace.
func (p Policy) Refusals(tb *benchv1.TunnelBenchmark) field.ErrorList {
	errs := transport.Validate(&tb.Spec)
	errs = append(errs, p.privilegeRefusals(tb)...)
	errs = append(errs, p.beyondNamespace(tb)...)
	if tb.Spec.Runner == nil || tb.Spec.Runner.Image == "" || p.allows(tb.Spec.Runner.Image) {
		return errs
	}
	list := "is empty"
	if len(p.RunnerImages) > 0 {
		list = "holds " + strings.Join(p.RunnerImages, ", ")
	}
	return append(errs, field.Forbidden(field.NewPath("spec", "runner", "image"), fmt.Sprintf(
		"image %q is neither the operator's runner image (%s) nor in the chart's runner.allowedImages, which %s: "+
			"the runner receives the server's password and keys, so only images the operator's administrator "+
			"allows may run it; leave spec.runner.image empty or ask them to add it",
		tb.Spec.Runner.Image, p.DefaultRunnerImage, list)))
}

// beyondNamespace refuses, when nobody checks the creator (CreatorUnchecked), every access of
// Required outside the benchmark's namespace: another team's server, a NetworkChaos shaping
// another namespace, a ClusterIssuer. Within the namespace the operator acts for whoever may
// create benchmarks there; beyond it, only a SubjectAccessReview of the creator could say they
// may, and without the webhook there is none.
func (p Policy) beyondNamespace(tb *benchv1.TunnelBenchmark) field.ErrorList {
	if !p.CreatorUnchecked {
		return nil
	}
	required, err := Required(tb)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
	}
	var errs field.ErrorList
	for _, a := range required {
		if a.Attributes.Namespace == tb.Namespace {
			continue
		}
		errs = append(errs, field.Forbidden(a.Field, fmt.Sprintf("it needs %s, beyond namespace %s, and %s; this operator runs "+
			"without its admission webhook (the chart value webhook.enabled), so nobody can check that the benchmark's "+
			"creator may: ask its administrator to enable it", a, tb.Namespace, a.Why)))
	}
	return errs
}

// privilegeRefusals refuse every transport whose pods would be privileged, unless the operator's
// administrator allowed them: a user who may create benchmarks would otherwise get root with
// NET_ADMIN in pods of their namespace through the operator.
func (p Policy) privilegeRefusals(tb *benchv1.TunnelBenchmark) field.ErrorList {
	if p.AllowPrivileged {
		return nil
	}
	var errs field.ErrorList
	for i, t := range tb.Spec.Transports {
		if why := t.PrivilegedReason(); why != "" {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "transports").Index(i).Child("vpn", "kind"),
				fmt.Sprintf("%s, which this operator's administrator has not allowed (the chart value %s); "+
					"ask them, or use vpn.kind wireguard (user space, restricted pods)", why, transport.PrivilegedSetting)))
		}
	}
	return errs
}

func (p Policy) allows(image string) bool {
	if image == p.DefaultRunnerImage {
		return true
	}
	return slices.ContainsFunc(p.RunnerImages, func(allowed string) bool {
		if prefix, ok := strings.CutSuffix(allowed, "*"); ok {
			return strings.HasPrefix(image, prefix)
		}
		return image == allowed
	})
}
