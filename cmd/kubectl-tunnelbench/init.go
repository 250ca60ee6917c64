package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

const (
	// runAllowance is what each run takes besides its load: the warm-up (5s by default), the
	// runner pod's scheduling and start, and the wait for its tunnels or pooler to accept
	// connections. It must stay above the warm-up, or the API server refuses the timeout.
	runAllowance = 30 * time.Second
	// timeoutMargin is what a benchmark takes once: the first pull of the runner image on a node,
	// the start of its gateways, proxies and poolers and the resolution of its server.
	timeoutMargin = 5 * time.Minute
	// operatorMaxTimeout is the operator's default --max-timeout (the chart's maxTimeout): a
	// benchmark asking for longer fails at once unless the administrator raised it.
	operatorMaxTimeout = 6 * time.Hour
	// initScript measures the path, not the database: it reads no table, so the benchmark needs
	// no `pgbench -i`, which would drop and re-create the pgbench_* tables on the user's server.
	initScript = "select 1;"
	// defaultExternalDatabase is the database of a server named by --host: every PostgreSQL
	// server has it, where CloudNativePG's "app" exists only on CloudNativePG's clusters.
	defaultExternalDatabase = "postgres"
	// commentColumn aligns the manifest's trailing comments, and paragraphWidth wraps its comment
	// paragraphs.
	commentColumn  = 36
	paragraphWidth = 100
)

// initTransports are the transport types init writes, in the API's order. Each one runs from its
// type's defaults on what the operator builds itself (an sshd or WireGuard gateway, HAProxy,
// PgBouncer or a CloudNativePG Pooler); what needs more — vpn.kind openvpn, which the operator's
// administrator must allow, a pooler over a tunnel, client certificates, an emulated link — is
// for the user to add by hand. TestInitKnowsEveryTransportType fails when the CRD gains a type,
// so that someone decides whether init may write it.
var initTransports = []benchv1.TransportType{benchv1.TransportDirect, benchv1.TransportTLS, benchv1.TransportSSH,
	benchv1.TransportPooler, benchv1.TransportVPN, benchv1.TransportProxy}

// hostPattern is the CRD's rule for spec.server.external.host (an IP address aside): checked here
// so that a wrong host fails at init, not at kubectl apply.
var hostPattern = func() *regexp.Regexp {
	label := `[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?`
	return regexp.MustCompile(`^` + label + `([.]` + label + `)*[.]?$`)
}()

// initOptions are init's flags and the namespace it writes.
type initOptions struct {
	name        string
	cnpgCluster string
	host        string
	port        int32
	portSet     bool
	secret      string
	caSecret    string
	database    string
	transports  []string
	duration    time.Duration
	repetitions int32
	clients     int32
	output      string
	// namespace is metadata.namespace, "" when no kubeconfig names one: kubectl apply then
	// places the benchmark in its own current namespace.
	namespace string
	// namespaceFlag is true when -n gave the namespace: the next commands must repeat it, since
	// the kubeconfig's context may name another.
	namespaceFlag bool
}

func initCmd(k *kube, out io.Writer) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init (--cnpg-cluster NAME | --host HOST --secret NAME)",
		Short: "Write a first TunnelBenchmark manifest for a server: direct against TLS, ready to apply",
		Long: "init writes a TunnelBenchmark manifest (YAML, on standard output or to --file FILE) that compares " +
			"--transports on one PostgreSQL server: a CloudNativePG cluster of the namespace (--cnpg-cluster), " +
			"or any server by host and a Secret with keys username and password (--host, --secret). The load is " +
			"\"" + initScript + "\" (no table is created or dropped), and spec.timeout covers every run. " +
			"It needs no cluster: the namespace comes from -n or the kubeconfig's context.",
		Example: `  # Direct against TLS on the CloudNativePG cluster pg of the current namespace, applied at once
  kubectl tunnelbench init --cnpg-cluster pg | kubectl apply -f -

  # Any PostgreSQL server by host, and the Secret holding its username and password, into a file
  kubectl tunnelbench init --host db.example.com --secret db-credentials --file first-benchmark.yaml

  # Every path the operator builds, 16 clients for 30 s per run
  kubectl tunnelbench init --cnpg-cluster pg --transports direct,tls,ssh,vpn,proxy,pooler --clients 16 --duration 30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.portSet = cmd.Flags().Changed("port")
			// "direct, tls" and a trailing comma mean what they look like.
			for i, t := range o.transports {
				o.transports[i] = strings.TrimSpace(t)
			}
			o.transports = slices.DeleteFunc(o.transports, func(t string) bool { return t == "" })
			if err := o.validate(); err != nil {
				return err
			}
			ns, err := k.namespace()
			switch {
			case clientcmd.IsEmptyConfig(err):
				// No kubeconfig at all: the manifest carries no namespace, and kubectl apply
				// chooses, as it does for any manifest without one.
			case err != nil:
				return fmt.Errorf("the namespace from the kubeconfig (or give -n): %w", err)
			default:
				o.namespace = ns
			}
			o.namespaceFlag = k.overrides.Context.Namespace != ""
			manifest := o.manifest()
			if o.output == "" {
				if _, err := io.WriteString(out, manifest); err != nil {
					return fmt.Errorf("writing the manifest: %w", err)
				}
				return nil
			}
			return writeNewFile(out, o.output, manifest)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "first-benchmark", "the benchmark's name")
	f.StringVar(&o.cnpgCluster, "cnpg-cluster", "",
		"the server: a CloudNativePG cluster of the namespace (its -rw Service, -app credentials, -ca CA)")
	f.StringVar(&o.host, "host", "", "the server: the DNS name or IP address of any PostgreSQL server (needs --secret)")
	f.Int32Var(&o.port, "port", benchv1.DefaultPort, "the server's port, with --host")
	f.StringVar(&o.secret, "secret", "", "with --host: the Secret holding the server's username and password")
	f.StringVar(&o.caSecret, "ca-secret", "",
		"with --host: the Secret (key ca.crt) holding the CA of the server's certificate; tls then verifies it "+
			"(verify-full), without it tls only encrypts (require)")
	f.StringVar(&o.database, "database", "", "the database to connect to (default app for --cnpg-cluster, "+
		"CloudNativePG's; "+defaultExternalDatabase+" for --host, which every server has)")
	f.StringSliceVar(&o.transports, "transports", []string{"direct", "tls"},
		"the paths to compare, the first one the baseline: some of "+typeList())
	f.DurationVar(&o.duration, "duration", 10*time.Second, "each run's load (pgbench -T), in whole seconds")
	f.Int32Var(&o.repetitions, "repetitions", benchv1.DefaultRepetitions,
		"how many times each transport runs (3 is the fewest that give an interval)")
	f.Int32Var(&o.clients, "clients", 4, "concurrent database sessions (pgbench -c)")
	f.StringVar(&o.output, "file", "", "the file to write (default standard output); init never overwrites one")
	return cmd
}

// typeList is initTransports as "direct, tls, ...".
func typeList() string {
	names := make([]string, len(initTransports))
	for i, t := range initTransports {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// validate checks the flags against the CRD's rules, so that a mistake is named here rather than
// by the API server at kubectl apply.
func (o *initOptions) validate() error {
	external := o.host != "" || o.secret != "" || o.caSecret != "" || o.portSet
	switch {
	case o.cnpgCluster != "" && external:
		return errors.New("--cnpg-cluster and --host/--secret/--port/--ca-secret name the server two ways: " +
			"give --cnpg-cluster NAME, or --host HOST --secret NAME")
	case o.cnpgCluster == "" && !external:
		return errors.New("name the server: --cnpg-cluster NAME (a CloudNativePG cluster of the namespace), or " +
			"--host HOST --secret NAME (any PostgreSQL server and the Secret holding its username and password)")
	case external && (o.host == "" || o.secret == ""):
		return errors.New("--host HOST and --secret NAME go together: the server's address, and the Secret " +
			"holding its username and password")
	}
	var problems []string
	check := func(flag, value string, msgs []string) {
		if len(msgs) > 0 {
			problems = append(problems, fmt.Sprintf("%s %q: %s", flag, value, strings.Join(msgs, "; ")))
		}
	}
	check("--name", o.name, nameProblems(o.name, 63))
	if o.cnpgCluster != "" {
		check("--cnpg-cluster", o.cnpgCluster, labelProblems(o.cnpgCluster, 50))
	} else {
		if net.ParseIP(o.host) == nil && (len(o.host) > 253 || !hostPattern.MatchString(o.host)) {
			check("--host", o.host, []string{"must be a DNS name (letters, digits, hyphens, dots) or an IP address, " +
				"an IPv6 one without brackets"})
		}
		if o.port < 1 || o.port > 65535 {
			problems = append(problems, fmt.Sprintf("--port %d: must be between 1 and 65535", o.port))
		}
		check("--secret", o.secret, nameProblems(o.secret, 253))
		if o.caSecret != "" {
			check("--ca-secret", o.caSecret, nameProblems(o.caSecret, 253))
		}
	}
	if d := o.database; len(d) > 63 || strings.Contains(d, "=") || strings.HasPrefix(d, "postgres://") ||
		strings.HasPrefix(d, "postgresql://") {
		check("--database", d, []string{"must be a database name of at most 63 characters, not a connection " +
			"string or URI"})
	}
	problems = append(problems, o.transportProblems()...)
	if o.duration < time.Second || o.duration > 24*time.Hour || o.duration%time.Second != 0 {
		problems = append(problems, fmt.Sprintf("--duration %s: must be whole seconds between 1s and 24h "+
			"(pgbench -T counts seconds)", o.duration))
	}
	if o.repetitions < 1 || o.repetitions > 20 {
		problems = append(problems, fmt.Sprintf("--repetitions %d: must be between 1 and 20", o.repetitions))
	}
	if o.clients < 1 || o.clients > 1000 {
		problems = append(problems, fmt.Sprintf("--clients %d: must be between 1 and 1000", o.clients))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// transportProblems checks --transports: types init can write, each once (the transports' names
// are their types, and the API keys transports by name).
func (o *initOptions) transportProblems() []string {
	if len(o.transports) == 0 {
		return []string{"--transports: name at least one of " + typeList()}
	}
	var problems []string
	seen := map[string]bool{}
	for _, t := range o.transports {
		switch {
		case !slices.Contains(initTransports, benchv1.TransportType(t)):
			problems = append(problems, fmt.Sprintf("--transports: unknown transport %q: want some of %s",
				t, typeList()))
		case seen[t]:
			problems = append(problems, fmt.Sprintf("--transports: %s twice: init writes each type once; add "+
				"variants (another sslMode, a sidecar pooler) to the manifest by hand, each with its own name", t))
		}
		seen[t] = true
	}
	return problems
}

// nameProblems are why s is not an object's name (a DNS subdomain) of at most max characters.
func nameProblems(s string, maxLen int) []string {
	msgs := validation.IsDNS1123Subdomain(s)
	if len(s) > maxLen && len(s) <= validation.DNS1123SubdomainMaxLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", maxLen))
	}
	return msgs
}

// labelProblems are why s is not a DNS label of at most max characters, as CloudNativePG's
// cluster names are.
func labelProblems(s string, maxLen int) []string {
	msgs := validation.IsDNS1123Label(s)
	if len(s) > maxLen && len(s) <= validation.DNS1123LabelMaxLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", maxLen))
	}
	return msgs
}

// initTimeout is spec.timeout for the runs: every run's load and allowance, plus the benchmark's
// one-off start, rounded up to the minute so that it reads as a person would write it. runs is
// the runs' share, for the manifest's comment.
func initTimeout(transports, repetitions int, d time.Duration) (timeout, runs time.Duration) {
	runs = time.Duration(transports*repetitions) * (d + runAllowance)
	return (runs + timeoutMargin + time.Minute - 1).Truncate(time.Minute), runs
}

// manifest is the TunnelBenchmark as YAML, with comments for a reader who has not written one:
// written as text rather than marshalled, since comments and a readable field order are the
// point; TestInit decodes it strictly into the API's type.
func (o *initOptions) manifest() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	// commented writes a field and a trailing comment in one column.
	commented := func(field, comment string) {
		line("%-*s # %s", commentColumn-1, field, comment)
	}
	cnpg := o.cnpgCluster != ""
	database := o.database
	if database == "" && !cnpg {
		database = defaultExternalDatabase
	}
	var server string
	if cnpg {
		server = fmt.Sprintf("the CloudNativePG cluster %s", o.cnpgCluster)
	} else {
		server = fmt.Sprintf("the PostgreSQL server %s", net.JoinHostPort(o.host, fmt.Sprint(o.port)))
	}
	file := o.output
	if file == "" {
		file = o.name + ".yaml"
	}
	ns := ""
	if o.namespaceFlag {
		ns = " -n " + o.namespace
	}

	times := fmt.Sprintf("%d times in random interleaved rounds", o.repetitions)
	if o.repetitions == 1 {
		times = "once"
	}
	answer := "every transport's tps and latency"
	if len(o.transports) > 1 && o.repetitions > 1 {
		answer += fmt.Sprintf(", and its ratio to %s with a 95 %% interval", o.transports[0])
	}
	paragraph(&b, "# ", fmt.Sprintf("%s, written by `kubectl tunnelbench init`: %s on %s. Each transport runs %q "+
		"from %d clients for %s, %s; the report gives %s.", o.name, o.transportSummary(), server, initScript,
		o.clients, shortDuration(o.duration), times, answer))
	line("#")
	if o.output == "" {
		line("# Next, with this saved as %s:", file)
	} else {
		line("# Next:")
	}
	next := [][2]string{
		{"kubectl apply -f " + file, ""},
		{"kubectl get tb " + o.name + ns + " -w", "its phase and progress, until Completed"},
		{"kubectl tunnelbench report " + o.name + ns, "the answer"},
	}
	width := 0
	for _, n := range next {
		width = max(width, len(n[0]))
	}
	for _, n := range next {
		if n[1] == "" {
			line("#   %s", n[0])
		} else {
			line("#   %-*s  # %s", width, n[0], n[1])
		}
	}
	line("apiVersion: %s", benchv1.GroupVersion.String())
	line("kind: TunnelBenchmark")
	line("metadata:")
	line("  name: %s", yamlString(o.name))
	if o.namespace != "" {
		line("  namespace: %s", yamlString(o.namespace))
	}
	line("spec:")
	line("  server:")
	if cnpg {
		line("    cnpg:")
		commented("      clusterName: "+yamlString(o.cnpgCluster), fmt.Sprintf("its %[1]s-rw Service, %[1]s-app "+
			"credentials and %[1]s-ca CA", o.cnpgCluster))
		if database != "" {
			line("      database: %s", yamlString(database))
		}
	} else {
		line("    external:")
		line("      host: %s", yamlString(o.host))
		line("      port: %d", o.port)
		line("      database: %s", yamlString(database))
		line("      credentialsSecret:")
		commented("        name: "+yamlString(o.secret), "keys username and password (kubernetes.io/basic-auth)")
		if o.caSecret != "" {
			line("      caSecret:")
			commented("        name: "+yamlString(o.caSecret), "key ca.crt: the CA of the server's certificate")
		}
	}
	line("  transports:                       # run in this order; the first is the baseline")
	for _, t := range o.transports {
		o.transport(&b, commented, benchv1.TransportType(t))
	}
	line("  load:")
	line("    # %q measures the path, not the database: it reads no table, so the benchmark creates", initScript)
	line("    # and drops nothing on the server (load.initialize stays off).")
	line("    script: %q", initScript)
	line("    clients: %d", o.clients)
	line("    duration: %s", shortDuration(o.duration))
	line("    repetitions: %d", o.repetitions)
	timeout, runs := initTimeout(len(o.transports), int(o.repetitions), o.duration)
	why := fmt.Sprintf("timeout: %s of runs (%d transports × %d repetitions × (%s load + %s for the warm-up and "+
		"the pods' start)), plus %s for pulling images and starting the peers, rounded up to the minute.",
		shortDuration(runs), len(o.transports), o.repetitions, shortDuration(o.duration), shortDuration(runAllowance),
		shortDuration(timeoutMargin))
	if timeout > operatorMaxTimeout {
		why += fmt.Sprintf(" It is longer than the operator's default maxTimeout (%s): the benchmark fails at once "+
			"unless the operator's administrator raised it; fewer transports or repetitions, or a shorter "+
			"duration, fit.", shortDuration(operatorMaxTimeout))
	}
	paragraph(&b, "  # ", why)
	line("  timeout: %s", shortDuration(timeout))
	return b.String()
}

// paragraph writes text as comment lines of at most paragraphWidth characters, each starting with
// prefix.
func paragraph(b *strings.Builder, prefix, text string) {
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > paragraphWidth {
			b.WriteString("\n")
			n = 0
		}
		if n == 0 {
			b.WriteString(prefix)
			n = len(prefix)
		} else {
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	b.WriteString("\n")
}

// transportSummary is "direct (the baseline) against tls and ssh".
func (o *initOptions) transportSummary() string {
	if len(o.transports) == 1 {
		return o.transports[0] + " alone"
	}
	rest := o.transports[1:]
	others := strings.Join(rest, ", ")
	if len(rest) > 1 {
		others = strings.Join(rest[:len(rest)-1], ", ") + " and " + rest[len(rest)-1]
	}
	return o.transports[0] + " (the baseline) against " + others
}

// transport writes one transport: named after its type, with the settings a first benchmark needs
// to pass the CRD's rules and a comment on what its path is.
func (o *initOptions) transport(b *strings.Builder, commented func(field, comment string), t benchv1.TransportType) {
	field := "  - name: " + string(t)
	typ := "    type: " + string(t)
	cnpg := o.cnpgCluster != ""
	switch t {
	case benchv1.TransportDirect:
		if cnpg {
			commented(field, fmt.Sprintf("plain TCP (sslmode=disable) to %s-rw", o.cnpgCluster))
		} else {
			commented(field, "plain TCP (sslmode=disable)")
		}
		fmt.Fprintln(b, typ)
	case benchv1.TransportTLS:
		commented(field, "libpq's TLS")
		fmt.Fprintln(b, typ)
		fmt.Fprintln(b, "    tls:")
		switch {
		case cnpg:
			commented("      sslMode: verify-full", fmt.Sprintf("checks the server against %s-ca", o.cnpgCluster))
		case o.caSecret != "":
			commented("      sslMode: verify-full", "checks the server against --ca-secret's CA")
		default:
			// The API refuses verify-ca and verify-full against an external server without a
			// caSecret: require is the one mode that runs.
			commented("      sslMode: require", "encrypts, checks no certificate: --ca-secret gives verify-full")
		}
	case benchv1.TransportSSH:
		commented(field, "one SSH tunnel through a gateway the operator runs")
		fmt.Fprintln(b, typ)
	case benchv1.TransportVPN:
		commented(field, "WireGuard in user space, through a gateway the operator runs")
		fmt.Fprintln(b, typ)
	case benchv1.TransportProxy:
		commented(field, "HAProxy in TCP mode, which the operator runs")
		fmt.Fprintln(b, typ)
	case benchv1.TransportPooler:
		if cnpg {
			commented(field, "PgBouncer next to the server: a CloudNativePG Pooler")
		} else {
			commented(field, "PgBouncer next to the server, which the operator runs")
		}
		fmt.Fprintln(b, typ)
		if o.clients > benchv1.DefaultPoolSize {
			// In session mode (the default) every client keeps a server connection: the API
			// refuses a pool smaller than the clients.
			fmt.Fprintln(b, "    pooler:")
			commented(fmt.Sprintf("      poolSize: %d", o.clients), "session mode: one server connection per client")
		}
	}
}

// yamlString is s as a YAML scalar, quoted where YAML would read it as something else (a number,
// a boolean such as "on", null).
func yamlString(s string) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		// A string always marshals; quoting is the safe answer regardless.
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// shortDuration is d as a person writes it: 10s, 1m30s, 9m, 2h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// writeNewFile writes text to a new file at path and says where: init never overwrites, since the
// file it would replace may be a manifest someone edited by hand.
func writeNewFile(out io.Writer, path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("--file %s: the file exists, and init does not overwrite it: remove it or choose another", path)
	}
	if err != nil {
		return fmt.Errorf("--file %s: %w", path, err)
	}
	if _, err := io.WriteString(f, text); err != nil {
		_ = f.Close()
		return fmt.Errorf("--file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--file %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	_, err = fmt.Fprintf(out, "wrote %s\n", abs)
	return err
}
