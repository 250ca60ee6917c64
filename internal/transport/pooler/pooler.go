// Package pooler is the pooler transport: PgBouncer between pgbench and the server, or for a MySQL
// server TunnelBench's own MySQL pooler in the runner pod (mysql.go, mysqlpool). Placed as a
// service it sits next to the server behind a Service (a CloudNativePG Pooler for a CloudNativePG
// server, the operator's own PgBouncer otherwise); placed as a sidecar it runs in the runner pod,
// optionally over another transport's path (over.go: its server connections cross that path's
// tunnel or proxy). PgBouncer's configuration, exporter and admin console are beneath it
// (pgbouncer). It registers itself and its rules from init and is linked into the operator by
// internal/transport/transports.
package pooler

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/pki"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
)

// The operator's PgBouncer (TLS Secret, Service, Deployment) or a CloudNativePG Pooler with the
// Service of its exporters; its certificate from cert-manager (transport.CertificatePeer).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=postgresql.cnpg.io,resources=poolers,verbs=get;list;create;delete

func init() {
	transport.Register(benchv1.TransportPooler, func(c transport.Context) transport.Transport { return pooler{c: c} },
		transport.ServiceKind, transport.DeploymentKind, specs.CNPGPoolerGVK, specs.CertificateGVK, transport.NetworkPolicyKind)
	transport.RegisterRules(benchv1.TransportPooler, transport.Rules{PoolsServerConnections: true, Sweeps: "poolSize", Check: poolerRules})
}

// poolerRules are a pooler transport's own: it takes every client, holds a server connection per
// client in session mode, resizes between a sweep's points only in the runner pod, and checks the
// server's name only where it sees it.
func poolerRules(spec *benchv1.TunnelBenchmarkSpec, i int, path *field.Path) field.ErrorList {
	t := spec.Transports[i]
	p := t.EffectivePooler()
	clients := transport.MaxClients(spec)
	var errs field.ErrorList
	if p.MaxClientConnections < clients {
		errs = append(errs, field.Invalid(path.Child("pooler", "maxClientConnections"), p.MaxClientConnections, fmt.Sprintf(
			"pooler.maxClientConnections (default %d) must be at least spec.load.clients (every point of spec.sweep.clients), "+
				"or the pooler refuses pgbench's clients", benchv1.DefaultMaxClientConnections)))
	}
	poolSize := p.PoolSize
	if spec.Sweep != nil && len(spec.Sweep.PoolSize) > 0 {
		poolSize = slices.Min(spec.Sweep.PoolSize)
	}
	if p.EffectiveImplementation(spec.Server.EffectiveEngine()) == benchv1.PoolerMySQLPool && spec.Load.Protocol == "prepared" &&
		poolSize < clients {
		errs = append(errs, field.Invalid(path.Child("pooler", "poolSize"), poolSize, fmt.Sprintf(
			"pooler.poolSize (default %d) must be at least spec.load.clients with spec.load.protocol prepared: the MySQL pooler "+
				"keeps a session with prepared statements on its server connection to its end, and the other clients would "+
				"wait for one until the run stalls; use protocol simple to share fewer server connections", benchv1.DefaultPoolSize)))
	}
	if p.PoolMode != benchv1.PoolModeTransaction && poolSize < clients {
		errs = append(errs, field.Invalid(path.Child("pooler", "poolSize"), poolSize, fmt.Sprintf(
			"pooler.poolSize (default %d) must be at least spec.load.clients in poolMode session, at every point of "+
				"spec.sweep.clients: each pgbench client keeps its server connection for its whole session, and the others "+
				"would wait for one until PgBouncer gives up; use poolMode transaction to share fewer server connections",
			benchv1.DefaultPoolSize)))
	}
	if p.Placement == benchv1.PoolerSidecar && t.Pooler != nil && t.Pooler.ServerTLS == benchv1.ServerTLSVerifyFull &&
		transport.UserspaceLink(spec, t) {
		errs = append(errs, field.Invalid(path.Child("pooler", "serverTLS"), t.Pooler.ServerTLS,
			"a sidecar pooler with serverTLS verify-full cannot cross the userspace link (PgBouncer would check the server's "+
				"name against the link proxy's loopback address): use serverTLS require, or emulator chaos-mesh"))
	}
	if spec.Sweep != nil && len(spec.Sweep.PoolSize) > 0 && p.Placement != benchv1.PoolerSidecar {
		errs = append(errs, field.Invalid(path.Child("pooler", "placement"), p.Placement,
			"spec.sweep.poolSize needs pooler transports, every one with placement sidecar: a shared pooler (placement service) "+
				"is one PgBouncer for every point, which the sweep cannot resize between runs"))
	}
	return errs
}

// Ports and paths of the pooler transport.
const (
	// PoolerServicePort is the pooler Service's port: PostgreSQL's, as CloudNativePG's Pooler.
	PoolerServicePort = 5432
	// PoolerListenPort is where the operator's PgBouncer listens, in its pod or in the runner pod.
	PoolerListenPort = 6432
	// PoolerTLSDir holds the pooler's certificate for clients (tls.crt, tls.key).
	PoolerTLSDir = "/etc/tunnelbench/pooler-tls"
	// PoolerServerCADir holds the server's CA, for server TLS verify-full.
	PoolerServerCADir = "/etc/tunnelbench/pooler-server-ca"
	// PoolerComponent is the component label of a pooler transport's objects.
	PoolerComponent = "pooler"
	// PoolerContainer is the sidecar PgBouncer's container in the runner pod.
	PoolerContainer = "pgbouncer"
	// poolerCertValidity bounds the pooler's generated certificate: it serves one benchmark.
	poolerCertValidity = 7 * 24 * time.Hour
)

// pooler puts PgBouncer between pgbench and the server. Placed as a service, it is shared and
// sits next to the server behind a Service: a CloudNativePG Pooler for a CloudNativePG server,
// the operator's own PgBouncer otherwise; it serves only its transport and goes when that run
// ends. Placed as a sidecar, it runs inside the runner pod and clients reach it over loopback.
type pooler struct {
	c transport.Context
}

func (p pooler) settings() benchv1.PoolerTransport { return p.c.Spec.EffectivePooler() }

// cnpg tells whether the shared pooler is CloudNativePG's, whose admin console the benchmark's
// user cannot read.
func (p pooler) cnpg() bool {
	return p.settings().Placement == benchv1.PoolerService && p.c.Benchmark.Spec.Server.CNPGClusterName(p.c.Benchmark) != ""
}

func (p pooler) name() string { return p.c.Benchmark.PoolerName(p.c.Spec.Name) }

// host is the pooler Service's DNS name.
func (p pooler) host() string { return fmt.Sprintf("%s.%s.svc", p.name(), p.c.Benchmark.Namespace) }

func (p pooler) meta(name string) metav1.ObjectMeta {
	return specs.OwnedMeta(p.c.Benchmark, name, PoolerComponent, p.c.Spec.Name)
}

func (pooler) FailureReason() string { return conditions.ReasonPoolerUnavailable }

// Blame: the sidecar PgBouncer or the shared pooler's pods that broke leave the pooler unavailable;
// the parts of the path it is over are that path's.
func (p pooler) Blame(part string) string {
	if part == PoolerContainer || part == MySQLPoolerContainer || part == PoolerComponent {
		return conditions.ReasonPoolerUnavailable
	}
	if inner, ok, err := p.over(); ok && err == nil {
		return inner.Blame(part)
	}
	return ""
}

// Describe: what libpq negotiated with the pooler, then the pooler's two hops, then the path it is
// over.
func (p pooler) Describe(res *benchv1.TransportResult) string {
	pool := ""
	if r := res.Pooler; r != nil {
		pool = fmt.Sprintf("%s %s %s: client %s %s, server %s %s", r.Implementation, r.Placement, r.PoolMode,
			r.ClientHop.Auth, r.ClientHop.TLS, r.ServerHop.Auth, r.ServerHop.TLS)
	}
	if inner, ok, err := p.over(); ok && err == nil {
		return transport.Words(pool, "over "+p.settings().Over+": "+overDescribe(inner, res))
	}
	return transport.Words(transport.TLSWords(res), pool)
}

// UserSecrets are those of the path the pooler is over.
func (p pooler) UserSecrets() []transport.SecretRef {
	if inner, ok, err := p.over(); ok && err == nil {
		return inner.UserSecrets()
	}
	return nil
}

func (p pooler) VerifiesServer() bool { return p.settings().ServerTLS == benchv1.ServerTLSVerifyFull }

func (p pooler) Peers() ([]transport.Peer, error) {
	switch {
	case p.settings().Placement == benchv1.PoolerSidecar:
		if inner, ok, err := p.over(); ok {
			if err != nil {
				return nil, err
			}
			return overPeers(inner)
		}
		return nil, nil
	case p.cnpg():
		return p.cnpgPeers(), nil
	}
	var peers []transport.Peer
	if p.settings().ClientTLS == benchv1.ClientTLSRequire {
		peers = append(peers, p.tlsPeer())
	}
	dep := p.deployment()
	peers = transport.WithNetworkPolicy(p.c, p.c.Benchmark, dep, append(peers, transport.Peer{Object: p.service()}))
	return append(peers,
		transport.Peer{Object: dep, Ready: transport.DeploymentReady("the pooler"), Created: func() (string, string) {
			what := "PgBouncer"
			if p.mysql() {
				what = "the MySQL pooler"
			}
			return conditions.ReasonPoolerCreated, fmt.Sprintf("Started %s %s for transport %s", what, p.name(), p.c.Spec.Name)
		}},
	), nil
}

// tlsPeer is the certificate the pooler presents to clients, in a Secret of the pooler's name:
// issued by spec.tls.issuerRef when the benchmark has one, else by a CA made for this pooler alone
// (its ca.crt is kept for clients that want to verify it).
func (p pooler) tlsPeer() transport.Peer {
	tb := p.c.Benchmark
	if tb.Spec.TLS != nil {
		cert := specs.Certificate(tb, p.name(), PoolerComponent, p.c.Spec.Name, p.hosts())
		return transport.CertificatePeer(tb, cert, p.c.CertificateWait)
	}
	secret := &corev1.Secret{ObjectMeta: p.meta(p.name()), Type: corev1.SecretTypeTLS}
	return transport.Peer{Object: secret, Generate: func() error {
		ca, err := pki.NewCA(p.name()+" CA", poolerCertValidity)
		if err != nil {
			return err
		}
		cert, err := ca.Issue(p.name(), p.hosts(), poolerCertValidity)
		if err != nil {
			return err
		}
		secret.Data = map[string][]byte{corev1.TLSCertKey: cert.CertPEM, corev1.TLSPrivateKeyKey: cert.KeyPEM, "ca.crt": ca.CertPEM}
		return nil
	}}
}

// hosts are the names the pooler's certificate is valid for: its Service's.
func (p pooler) hosts() []string {
	return []string{p.name(), fmt.Sprintf("%s.%s", p.name(), p.c.Benchmark.Namespace), p.host(), p.host() + ".cluster.local"}
}

func (p pooler) Pod(run *runspec.Run) (specs.Pod, error) {
	s := p.settings()
	run.Pooler = runspec.PoolerPgBouncer
	switch {
	case p.mysql() && s.Placement == benchv1.PoolerSidecar:
		return p.mysqlSidecarPod(run), nil
	case p.mysql():
		return p.mysqlServicePod(run), nil
	case s.Placement == benchv1.PoolerSidecar:
		run.PoolerPart = PoolerContainer
		return p.sidecarPod(run)
	case p.cnpg():
		run.Pooler = runspec.PoolerOpaque
		run.PoolerMetrics = net.JoinHostPort(fmt.Sprintf("%s.%s.svc", p.cnpgMetricsServiceName(), p.c.Benchmark.Namespace),
			strconv.Itoa(pgbouncer.CNPGExporterPort))
	default:
		// The operator's shared PgBouncer serves its container's CPU accounting (deployment).
		run.CPUParts = append(run.CPUParts, runspec.CPUPart{Name: PoolerPart, Host: p.host(), Port: runspec.PeerCPUPort})
		run.PoolerPart = PoolerPart
	}
	pod := transport.LibPQ(p.c.Server, p.host(), PoolerServicePort, string(s.ClientTLS))
	p.c.LibPQVia(&pod)
	return pod, nil
}

// sidecarPod is pgbench connecting over loopback to PgBouncer in a native sidecar, whose
// connections go to the server, or through the path it is over.
func (p pooler) sidecarPod(run *runspec.Run) (specs.Pod, error) {
	pod := transport.LibPQ(p.c.Server, "127.0.0.1", PoolerListenPort, string(p.settings().ClientTLS))
	pb := p.pgbouncer("127.0.0.1", pgbouncer.AuthTrust)
	if inner, ok, err := p.over(); ok {
		if err != nil {
			return specs.Pod{}, err
		}
		path, err := p.overPod(inner, &pb, run)
		if err != nil {
			return specs.Pod{}, err
		}
		pod.Sidecars, pod.Volumes, pod.Mounts = path.Sidecars, path.Volumes, append(pod.Mounts, path.Mounts...)
	} else {
		// Only the pooler's own connections cross the link.
		host, port := p.c.Dial(p.Hop())
		pb.config.ServerHost, pb.config.ServerPort = host, int(port)
	}
	image, pullPolicy := specs.RunnerImage(p.c.Benchmark, p.c.Defaults)
	c := pb.container(image, pullPolicy)
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	c.StartupProbe = specs.StartupProbe(PoolerListenPort)
	pod.Sidecars = append(pod.Sidecars, c)
	pod.Volumes = append(pod.Volumes, pb.volumes...)
	return pod, nil
}

// Hop: a sidecar pooler's connections to the server cross the link (pgbench's reach the pooler
// over loopback), on the hop of the path it is over when it is over one; pgbench's own cross it
// to a shared pooler.
func (p pooler) Hop() transport.Hop {
	if inner, ok, err := p.over(); ok && err == nil {
		return inner.Hop()
	}
	sidecar := p.settings().Placement == benchv1.PoolerSidecar
	switch {
	case p.mysql() && sidecar:
		return transport.ServerHop(p.c.Server, "MySQL pooler sidecar → server")
	case p.mysql():
		return transport.Hop{Host: p.host(), Port: MySQLPoolerServicePort, What: "sysbench → MySQL pooler Service"}
	case sidecar:
		return transport.ServerHop(p.c.Server, "PgBouncer sidecar → server")
	}
	return transport.Hop{Host: p.host(), Port: PoolerServicePort, What: "pgbench → pooler Service"}
}

// Record keeps both hops of the pooler: how each side authenticates (from the pooler's
// configuration), the TLS each negotiated (measured by the runner and by the server), and the
// pooler's own counters when the runner could read them.
func (p pooler) Record(rep *report.Report, res *benchv1.TransportResult) {
	if p.mysql() {
		res.Pooler = p.mysqlRecord(rep)
		return
	}
	s := p.settings()
	out := &benchv1.PoolerResult{
		Implementation: "PgBouncer", Placement: s.Placement, PoolMode: s.PoolMode,
		ClientHop: benchv1.Hop{Auth: "scram-sha-256", TLS: "none"},
		ServerHop: benchv1.Hop{Auth: "password", TLS: "none"},
	}
	switch {
	case s.Placement == benchv1.PoolerSidecar:
		out.ClientHop.Auth = "trust"
	case p.cnpg():
		// CloudNativePG's PgBouncer looks passwords up with auth_query and logs into the server
		// with the user's own SCRAM secret.
		out.Implementation = "CloudNativePG Pooler"
		out.ClientHop.Auth = "scram-sha-256 (auth_query)"
	}
	if rp := rep.Pooler; rp != nil {
		if rp.ClientTLS != nil {
			out.ClientHop.TLS = rp.ClientTLS.Version + "/" + rp.ClientTLS.Cipher
		}
		if rp.Counted {
			tx, servers := rp.Transactions, int32(rp.ServerConnections)
			out.Transactions, out.ServerConnections = &tx, &servers
		}
		out.Version = rp.Version
	}
	// pg_stat_ssl describes the server's end of the pooler's connection.
	if rep.TLS != nil {
		out.ServerHop.TLS = rep.TLS.Version + "/" + rep.TLS.Cipher
	}
	res.Pooler = out
	if inner, ok, err := p.over(); ok && err == nil {
		inner.Record(rep, res)
	}
}

// ownPgBouncer is one of the operator's own PgBouncers: its settings (the user comes from the
// credentials Secret at start) and what its container mounts.
type ownPgBouncer struct {
	config  pgbouncer.Config
	env     []corev1.EnvVar
	volumes []corev1.Volume
	mounts  []corev1.VolumeMount
}

// pgbouncer is the operator's PgBouncer listening on listen, with the server, the pool and the
// server hop's TLS from the spec.
func (p pooler) pgbouncer(listen, clientAuth string) ownPgBouncer {
	s, server := p.settings(), p.c.Server
	pb := ownPgBouncer{
		config: pgbouncer.Config{
			ListenAddr: listen, ListenPort: PoolerListenPort, ServerHost: server.Host, ServerPort: int(server.Port),
			ClientAuth: clientAuth, PoolMode: string(s.PoolMode), PoolSize: int(s.PoolSize),
			MaxClientConn: int(s.MaxClientConnections), ServerTLSMode: string(s.ServerTLS),
		},
		env: []corev1.EnvVar{
			specs.SecretEnv("PGUSER", server.CredentialsSecret, server.UsernameKey),
			specs.SecretEnv("PGPASSWORD", server.CredentialsSecret, server.PasswordKey),
		},
	}
	if p.VerifiesServer() && server.CASecret != "" {
		pb.config.ServerCAFile = transport.MountServerCA(&pb.volumes, &pb.mounts, server, "pooler-server-ca", PoolerServerCADir)
	}
	return pb
}

// container runs `tunnelbench-runner pgbouncer`, which writes PgBouncer's configuration into the
// pod's memory-backed /tmp and becomes PgBouncer.
func (pb ownPgBouncer) container(image string, pullPolicy corev1.PullPolicy) corev1.Container {
	c := specs.HelperContainer(PoolerContainer, image, pullPolicy, "250m", "32Mi", "256Mi")
	c.Command, c.Args = []string{"tunnelbench-runner"}, append([]string{"pgbouncer"}, pb.config.Args()...)
	c.Env = append(c.Env, pb.env...)
	c.VolumeMounts = append(c.VolumeMounts, pb.mounts...)
	return c
}

// PoolerPart is a shared PgBouncer's part of the path in a run's cost (a sidecar one's is its
// container's name, pgbouncer).
const PoolerPart = "pooler"

// service exposes the operator's PgBouncer on PostgreSQL's port, or the MySQL pooler on MySQL's
// with its counters; and the pooler's CPU accounting.
func (p pooler) service() *corev1.Service {
	meta := p.meta(p.name())
	ports := []corev1.ServicePort{{Name: "pgbouncer", Port: PoolerServicePort,
		TargetPort: intstr.FromInt32(PoolerListenPort), Protocol: corev1.ProtocolTCP}}
	if p.mysql() {
		ports = mysqlServicePorts()
	}
	return &corev1.Service{
		ObjectMeta: meta,
		Spec:       corev1.ServiceSpec{Selector: meta.Labels, Ports: append(ports, transport.PeerCPUServicePort())},
	}
}

// deployment runs the operator's PgBouncer next to the server, as the gateway does: every client
// logs in with SCRAM, over TLS when clientTLS is require. Or the MySQL pooler.
func (p pooler) deployment() *appsv1.Deployment {
	if p.mysql() {
		return p.mysqlDeployment()
	}
	pb := p.pgbouncer("0.0.0.0", pgbouncer.AuthSCRAM)
	if p.settings().ClientTLS == benchv1.ClientTLSRequire {
		pb.config.ClientTLSCertFile = PoolerTLSDir + "/" + corev1.TLSCertKey
		pb.config.ClientTLSKeyFile = PoolerTLSDir + "/" + corev1.TLSPrivateKeyKey
		pb.volumes = append(pb.volumes, specs.SecretVolume("pooler-tls", p.name(),
			corev1.KeyToPath{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey},
			corev1.KeyToPath{Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}))
		pb.mounts = append(pb.mounts, corev1.VolumeMount{Name: "pooler-tls", MountPath: PoolerTLSDir, ReadOnly: true})
	}
	image, pullPolicy := specs.RunnerImage(p.c.Benchmark, p.c.Defaults)
	c := pb.container(image, pullPolicy)
	c.Ports = []corev1.ContainerPort{{Name: "pgbouncer", ContainerPort: PoolerListenPort}}
	c.ReadinessProbe = specs.TCPReadiness(PoolerListenPort)
	transport.ServePeerCPU(&c)
	return specs.ServerSideDeployment(p.c.Benchmark, p.meta(p.name()), c, pb.volumes...)
}

// NodeReadPods: a CloudNativePG Pooler's pods (CloudNativePG labels them cnpg.io/poolerName), as
// part pooler.
func (p pooler) NodeReadPods() (string, map[string]string, bool) {
	return PoolerPart, map[string]string{"cnpg.io/poolerName": p.name()}, p.cnpg()
}

// cnpgPeers are a CloudNativePG Pooler and a headless Service over its pods (CloudNativePG labels
// them cnpg.io/poolerName), so that the runner can read each pod's PgBouncer exporter: the
// pooler's evidence, since its admin console is not open to the application's user. The Pooler is
// ready when the Deployment CloudNativePG makes for it (named like the Pooler) is available.
func (p pooler) cnpgPeers() []transport.Peer {
	var peers []transport.Peer
	if p.c.NetworkPolicies {
		// Before the Pooler: CloudNativePG's PgBouncer holds the server's connections, and its
		// pods never serve anyone but the benchmark's runners (PgBouncer and its exporter).
		peers = append(peers, transport.Peer{Object: transport.AdmitRunners(p.c.Benchmark, p.meta(p.name()),
			metav1.LabelSelector{MatchLabels: map[string]string{"cnpg.io/poolerName": p.name()}},
			transport.PolicyPort(corev1.ProtocolTCP, CNPGPoolerPort), transport.PolicyPort(corev1.ProtocolTCP, pgbouncer.CNPGExporterPort))})
	}
	return append(peers, []transport.Peer{
		{Object: p.cnpgMetricsService()},
		{Object: p.cnpgPooler(),
			NotInstalled: "CloudNativePG's Pooler kind is not installed in this cluster: install CloudNativePG, " +
				"or use pooler.placement sidecar",
			Created: func() (string, string) {
				return conditions.ReasonPoolerCreated, fmt.Sprintf("Created CloudNativePG Pooler %s for transport %s", p.name(), p.c.Spec.Name)
			},
			Ready: func(ctx context.Context, c transport.Cluster, _ client.Object) (transport.Status, error) {
				dep := &appsv1.Deployment{}
				if err := c.Get(ctx, p.name(), dep); err != nil {
					return transport.Status{Waiting: "CloudNativePG to create the Pooler's Deployment"}, client.IgnoreNotFound(err)
				}
				return transport.DeploymentReady("the CloudNativePG Pooler")(ctx, c, dep)
			}},
	}...)
}

// CNPGPoolerPort is where CloudNativePG's PgBouncer listens in its pods.
const CNPGPoolerPort = 5432

// cnpgPooler is CloudNativePG's Pooler against the benchmark's CloudNativePG server: CloudNativePG
// runs PgBouncer with its own authentication (auth_query with a client certificate) and TLS to the
// server; the benchmark sets the pool.
func (p pooler) cnpgPooler() *unstructured.Unstructured {
	s := p.settings()
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"cluster":   map[string]any{"name": p.c.Benchmark.Spec.Server.CNPGClusterName(p.c.Benchmark)},
			"instances": int64(1),
			"type":      "rw",
			"pgbouncer": map[string]any{
				"poolMode": string(s.PoolMode),
				"parameters": map[string]any{
					"default_pool_size": strconv.Itoa(int(s.PoolSize)),
					"max_client_conn":   strconv.Itoa(int(s.MaxClientConnections)),
				},
			},
		},
	}}
	u.SetGroupVersionKind(specs.CNPGPoolerGVK)
	specs.SetMeta(u, p.meta(p.name()))
	return u
}

// cnpgMetricsServiceName is the headless Service of a CloudNativePG Pooler's exporters.
func (p pooler) cnpgMetricsServiceName() string {
	return p.c.Benchmark.PoolerMetricsName(p.c.Spec.Name)
}

func (p pooler) cnpgMetricsService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: p.meta(p.cnpgMetricsServiceName()),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{"cnpg.io/poolerName": p.name()},
			Ports: []corev1.ServicePort{{Name: "metrics", Port: pgbouncer.CNPGExporterPort,
				TargetPort: intstr.FromInt32(pgbouncer.CNPGExporterPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}
