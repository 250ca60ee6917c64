package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// noKubeconfig points client-go at a kubeconfig that does not exist, as on a laptop without a
// cluster, so that the developer's own kubeconfig cannot leak into a test.
func noKubeconfig(t *testing.T) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
}

// runPlugin runs the plugin with args, no cluster behind it.
func runPlugin(args ...string) (string, error) {
	var out bytes.Buffer
	root := newRoot(&out)
	root.SetArgs(args)
	root.SetContext(context.Background())
	err := root.Execute()
	return out.String(), err
}

// decodeStrict reads init's output as the API's type, failing on any field the type lacks.
func decodeStrict(t *testing.T, manifest string) *benchv1.TunnelBenchmark {
	t.Helper()
	tb := &benchv1.TunnelBenchmark{}
	if err := yaml.UnmarshalStrict([]byte(manifest), tb); err != nil {
		t.Fatalf("the manifest is not a TunnelBenchmark: %v\n%s", err, manifest)
	}
	return tb
}

func TestInit(t *testing.T) {
	noKubeconfig(t)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, tb *benchv1.TunnelBenchmark)
		// says are lines the manifest holds, comments included.
		says []string
	}{
		{name: "a CloudNativePG cluster, the defaults", args: []string{"--cnpg-cluster", "pg"},
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				s := tb.Spec.Server
				if s.CNPG == nil || s.CNPG.ClusterName != "pg" || s.External != nil || s.Managed != nil {
					t.Errorf("server %+v, want cnpg pg", s)
				}
				if tb.Name != "first-benchmark" || tb.Namespace != "" {
					t.Errorf("named %s/%s, want first-benchmark without a namespace (no kubeconfig)",
						tb.Namespace, tb.Name)
				}
				if got := tb.Spec.Transports[1].EffectiveSSLMode(); got != benchv1.SSLModeVerifyFull {
					t.Errorf("tls sslMode %s, want verify-full against pg-ca", got)
				}
			},
			says: []string{"written by `kubectl tunnelbench init`: direct (the baseline) against tls on",
				"#   kubectl apply -f first-benchmark.yaml", "#   kubectl get tb first-benchmark -w ",
				"#   kubectl tunnelbench report first-benchmark ", "its pg-rw Service, pg-app credentials and pg-ca CA",
				"  timeout: 9m"}},
		{name: "a host and its Secret", args: []string{"--host", "db.example", "--secret", "db-credentials"},
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				e := tb.Spec.Server.External
				if e == nil || e.Host != "db.example" || e.Port != 5432 || e.Database != "postgres" ||
					e.CredentialsSecret.Name != "db-credentials" || e.CASecret != nil || tb.Spec.Server.CNPG != nil {
					t.Fatalf("server %+v, want external db.example:5432/postgres with db-credentials", tb.Spec.Server)
				}
				// Without a CA, require is the one TLS mode the API admits against an external server.
				if got := tb.Spec.Transports[1].EffectiveSSLMode(); got != benchv1.SSLModeRequire {
					t.Errorf("tls sslMode %s, want require", got)
				}
			}},
		{name: "a host with its CA, every transport, more clients than a pool",
			args: []string{"--host", "10.0.0.7", "--port", "6543", "--secret", "pg", "--ca-secret", "pg-ca",
				"--database", "bench", "--transports", "direct,tls,ssh,vpn,proxy,pooler", "--clients", "50",
				"--duration", "1m30s", "--repetitions", "5", "--name", "paths"},
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				e := tb.Spec.Server.External
				if e == nil || e.Host != "10.0.0.7" || e.Port != 6543 || e.Database != "bench" || e.CASecret == nil ||
					e.CASecret.Name != "pg-ca" {
					t.Fatalf("server %+v", tb.Spec.Server)
				}
				if got := tb.Spec.Transports[1].EffectiveSSLMode(); got != benchv1.SSLModeVerifyFull {
					t.Errorf("tls sslMode %s, want verify-full with a CA", got)
				}
				// Session mode needs a server connection per client.
				if p := tb.Spec.Transports[5].EffectivePooler(); p.PoolSize < 50 {
					t.Errorf("pooler poolSize %d, want at least the 50 clients", p.PoolSize)
				}
			},
			says: []string{"direct (the baseline) against tls, ssh, vpn, proxy and pooler", "duration: 1m30s"}},
		{name: "one transport, the longest runs", args: []string{"--cnpg-cluster", "pg", "--transports", "ssh",
			"--duration", "24h", "--repetitions", "20"},
			says: []string{"ssh alone", "longer than the operator's default maxTimeout (6h)"}},
		{name: "a namespace from -n", args: []string{"--cnpg-cluster", "pg", "-n", "db-team"},
			check: func(t *testing.T, tb *benchv1.TunnelBenchmark) {
				if tb.Namespace != "db-team" {
					t.Errorf("namespace %q, want db-team", tb.Namespace)
				}
			},
			// The context may name another namespace: the next commands must say which.
			says: []string{"#   kubectl get tb first-benchmark -n db-team -w",
				"#   kubectl tunnelbench report first-benchmark -n db-team "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runPlugin(append([]string{"init"}, tt.args...)...)
			if err != nil {
				t.Fatalf("init %v: %v", tt.args, err)
			}
			tb := decodeStrict(t, out)
			o := parsedInitFlags(t, tt.args)
			checkInitManifest(t, tb, o)
			if tt.check != nil {
				tt.check(t, tb)
			}
			// The comments' paragraphs are wrapped: read them unwrapped too.
			unwrapped := strings.NewReplacer("\n# ", " ", "\n  # ", " ").Replace(out)
			for _, s := range tt.says {
				if !strings.Contains(out, s) && !strings.Contains(unwrapped, s) {
					t.Errorf("the manifest lacks %q:\n%s", s, out)
				}
			}
			for i, l := range strings.Split(out, "\n") {
				if len(l) > 120 {
					t.Errorf("line %d is %d characters long: %s", i+1, len(l), l)
				}
			}
		})
	}
}

// parsedInitFlags is what init's flags say for args, read by init's own flag set.
func parsedInitFlags(t *testing.T, args []string) *initOptions {
	t.Helper()
	cmd := initCmd(&kube{}, &bytes.Buffer{})
	cmd.Flags().StringP("namespace", "n", "", "")
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	get := func(name string) string { return cmd.Flags().Lookup(name).Value.String() }
	o := &initOptions{cnpgCluster: get("cnpg-cluster"), host: get("host"), secret: get("secret")}
	o.transports, _ = cmd.Flags().GetStringSlice("transports")
	o.duration, _ = cmd.Flags().GetDuration("duration")
	o.repetitions, _ = cmd.Flags().GetInt32("repetitions")
	o.clients, _ = cmd.Flags().GetInt32("clients")
	return o
}

// checkInitManifest holds what every manifest init writes must: the server as asked, the
// transports asked in their order, the load asked, and a timeout that covers every run.
func checkInitManifest(t *testing.T, tb *benchv1.TunnelBenchmark, o *initOptions) {
	t.Helper()
	if tb.APIVersion != benchv1.GroupVersion.String() || tb.Kind != "TunnelBenchmark" {
		t.Errorf("apiVersion %s, kind %s", tb.APIVersion, tb.Kind)
	}
	if o.cnpgCluster != "" && (tb.Spec.Server.CNPG == nil || tb.Spec.Server.CNPG.ClusterName != o.cnpgCluster) {
		t.Errorf("server %+v, want the CloudNativePG cluster %s", tb.Spec.Server, o.cnpgCluster)
	}
	e := tb.Spec.Server.External
	if o.host != "" && (e == nil || e.Host != o.host || e.CredentialsSecret.Name != o.secret) {
		t.Errorf("server %+v, want %s with the Secret %s", tb.Spec.Server, o.host, o.secret)
	}
	var names, types []string
	for _, tr := range tb.Spec.Transports {
		names, types = append(names, tr.Name), append(types, string(tr.Type))
	}
	if !slices.Equal(names, o.transports) || !slices.Equal(types, o.transports) {
		t.Errorf("transports %v of types %v, want %v", names, types, o.transports)
	}
	l := tb.Spec.Load
	if l.Script != initScript || l.Clients != o.clients || l.Duration == nil || l.Duration.Duration != o.duration ||
		tb.Repetitions() != o.repetitions || l.Initialize {
		t.Errorf("load %+v, want %q from %d clients for %s, %d repetitions, no initialization", l, initScript,
			o.clients, o.duration, o.repetitions)
	}
	runs := time.Duration(len(o.transports)*int(o.repetitions)) * (o.duration + runAllowance)
	if tb.Spec.Timeout == nil || tb.TimeoutDuration() < runs+timeoutMargin || tb.TimeoutDuration()%time.Minute != 0 {
		t.Errorf("timeout %v, want whole minutes covering %s of runs and %s", tb.Spec.Timeout, runs, timeoutMargin)
	}
	// The API server's own bound: the runs' warm-up and load within spec.timeout.
	if text, fits := plan(tb); !fits {
		t.Errorf("plan says the timeout does not fit: %s", text)
	}
}

func TestInitRefuses(t *testing.T) {
	noKubeconfig(t)
	tests := []struct {
		name string
		args []string
		says []string
	}{
		{"both forms", []string{"--cnpg-cluster", "pg", "--host", "db", "--secret", "s"},
			[]string{"--cnpg-cluster", "--host", "two ways"}},
		{"a cluster and a port", []string{"--cnpg-cluster", "pg", "--port", "5433"}, []string{"two ways"}},
		{"neither form", nil, []string{"name the server", "--cnpg-cluster NAME", "--host HOST --secret NAME"}},
		{"a host without its Secret", []string{"--host", "db"}, []string{"--host HOST and --secret NAME go together"}},
		{"a Secret without a host", []string{"--secret", "s"}, []string{"go together"}},
		{"an unknown transport", []string{"--cnpg-cluster", "pg", "--transports", "direct,wireguard"},
			[]string{`unknown transport "wireguard"`, "direct, tls, ssh, pooler, vpn, proxy"}},
		{"a transport twice", []string{"--cnpg-cluster", "pg", "--transports", "tls,tls"},
			[]string{"tls twice", "by hand"}},
		{"no transport", []string{"--cnpg-cluster", "pg", "--transports", ""}, []string{"at least one"}},
		{"a host that is no host", []string{"--host", "db_1.example", "--secret", "s"},
			[]string{`--host "db_1.example"`}},
		{"a cluster name CloudNativePG refuses", []string{"--cnpg-cluster", "PG"}, []string{`--cnpg-cluster "PG"`}},
		{"a name too long for the label", []string{"--cnpg-cluster", "pg", "--name", strings.Repeat("a", 64)},
			[]string{"--name", "no more than 63"}},
		{"a connection string as the database", []string{"--cnpg-cluster", "pg", "--database", "host=evil"},
			[]string{"--database", "connection string"}},
		{"a fraction of a second", []string{"--cnpg-cluster", "pg", "--duration", "1500ms"},
			[]string{"--duration 1.5s", "whole seconds"}},
		{"every bound at once", []string{"--cnpg-cluster", "pg", "--clients", "0", "--repetitions", "21"},
			[]string{"--clients 0", "--repetitions 21"}},
		{"an argument", []string{"pg"}, []string{"unknown command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runPlugin(append([]string{"init"}, tt.args...)...)
			if err == nil {
				t.Fatalf("init %v succeeded:\n%s", tt.args, out)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the error %q lacks %q", err, s)
				}
			}
			if out != "" {
				t.Errorf("a refusal wrote %q", out)
			}
		})
	}
}

// TestInitNamespace: the namespace is the kubeconfig context's, read from the file alone: the
// cluster it names is never contacted.
func TestInitNamespace(t *testing.T) {
	noKubeconfig(t)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: unreachable
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: analytics
  context: {cluster: unreachable, user: nobody, namespace: analytics}
current-context: analytics
users:
- name: nobody
  user: {token: none}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runPlugin("init", "--cnpg-cluster", "pg", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if tb := decodeStrict(t, out); tb.Namespace != "analytics" {
		t.Errorf("namespace %q, want the context's analytics", tb.Namespace)
	}
	// kubectl reads the same context: the next commands need no -n.
	if strings.Contains(out, " -n ") {
		t.Errorf("the next commands name a namespace:\n%s", out)
	}
}

func TestInitOutputFile(t *testing.T) {
	noKubeconfig(t)
	path := filepath.Join(t.TempDir(), "bench.yaml")
	out, err := runPlugin("init", "--cnpg-cluster", "pg", "--file", path)
	if err != nil || out != "wrote "+path+"\n" {
		t.Fatalf("init -o: %v, %q", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "#   kubectl apply -f "+path+"\n") {
		t.Errorf("the next commands do not apply %s:\n%s", path, b)
	}
	decodeStrict(t, string(b))
	// A second init must not replace what the user may have edited since.
	if err := os.WriteFile(path, []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runPlugin("init", "--cnpg-cluster", "pg", "--file", path); err == nil ||
		!strings.Contains(err.Error(), "does not overwrite") {
		t.Errorf("init over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "edited" {
		t.Errorf("the existing file became %q", b)
	}
}

func TestInitTimeout(t *testing.T) {
	tests := []struct {
		transports, repetitions int
		duration                time.Duration
		want                    time.Duration
	}{
		{2, 3, 10 * time.Second, 9 * time.Minute},   // 4m of runs + 5m
		{1, 1, time.Second, 6 * time.Minute},        // 5m31s, rounded up
		{1, 1, 30 * time.Second, 6 * time.Minute},   // exactly 6m: not rounded further
		{6, 20, time.Minute, 185 * time.Minute},     // 3h of runs + 5m
		{3, 3, 90 * time.Second, 23 * time.Minute},  // 18m of runs + 5m
		{3, 3, 91 * time.Second, 24 * time.Minute},  // 18m9s + 5m, rounded up
		{3, 3, 100 * time.Second, 25 * time.Minute}, // 19m30s + 5m, rounded up
	}
	for _, tt := range tests {
		got, _ := initTimeout(tt.transports, tt.repetitions, tt.duration)
		if got != tt.want {
			t.Errorf("initTimeout(%d, %d, %s) = %s, want %s", tt.transports, tt.repetitions, tt.duration, got, tt.want)
		}
	}
}

// TestInitKnowsEveryTransportType fails when the CRD gains a transport type: someone must decide
// whether init can write it from its defaults, or leave it to the user (initTransports).
func TestInitKnowsEveryTransportType(t *testing.T) {
	crdPath := filepath.Join("..", "..", "config", "crd", "bases", "bench.tunnelbench.io_tunnelbenchmarks.yaml")
	b, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	typ := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["transports"].Items.Schema.
		Properties["type"]
	var enum []string
	for _, v := range typ.Enum {
		enum = append(enum, strings.Trim(string(v.Raw), `"`))
	}
	var known []string
	for _, tt := range initTransports {
		known = append(known, string(tt))
	}
	if len(enum) == 0 || !slices.Equal(enum, known) {
		t.Errorf("the CRD's transport types are %v, init knows %v", enum, known)
	}
}

// TestEveryCommandHasExamples: every command shows examples in --help, in kubectl's layout, and
// every example parses: its command exists and takes those flags and arguments.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if name := cmd.Name(); name == "help" || name == "completion" {
			return
		}
		if strings.TrimSpace(cmd.Example) == "" {
			t.Errorf("%s has no Example", cmd.CommandPath())
		}
		commands := 0
		for _, line := range strings.Split(cmd.Example, "\n") {
			switch {
			case line == "" || strings.HasPrefix(line, "  # "):
			case strings.HasPrefix(line, "  kubectl tunnelbench "):
				commands++
				checkExample(t, cmd, strings.TrimPrefix(line, "  "))
			default:
				t.Errorf("%s: the example line %q is neither `  # comment` nor `  kubectl tunnelbench ...`",
					cmd.CommandPath(), line)
			}
		}
		if commands < 1 || commands > 3 {
			t.Errorf("%s has %d example commands, want 1 to 3", cmd.CommandPath(), commands)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&bytes.Buffer{}))
}

// checkExample parses each `kubectl tunnelbench` command of an example line (a pipe's stages in
// turn) as the plugin would, without running it.
func checkExample(t *testing.T, of *cobra.Command, line string) {
	t.Helper()
	for _, stage := range strings.Split(line, "|") {
		stage = strings.TrimSpace(stage)
		rest, ok := strings.CutPrefix(stage, "kubectl tunnelbench ")
		if !ok {
			continue
		}
		root := newRoot(&bytes.Buffer{})
		cmd, args, err := root.Find(strings.Fields(rest))
		if err == nil && cmd == root {
			t.Errorf("%s: the example %q runs no command", of.CommandPath(), stage)
			continue
		}
		if err == nil {
			err = cmd.ParseFlags(args)
		}
		if err == nil {
			err = cmd.ValidateArgs(cmd.Flags().Args())
		}
		if err == nil {
			err = cmd.ValidateRequiredFlags()
		}
		if err != nil {
			t.Errorf("%s: the example %q: %v", of.CommandPath(), stage, err)
		}
	}
}

// testInitAccepted has the API server (with the CRD's schema and CEL rules) take what init writes,
// in a dry-run create; plugin runs the plugin against it in the namespace db-team.
func testInitAccepted(t *testing.T, c client.Client, plugin func(args ...string) (string, error)) {
	for _, args := range [][]string{
		{"--cnpg-cluster", "pg"},
		{"--cnpg-cluster", "pg", "--transports", "direct,tls,ssh,vpn,proxy,pooler", "--clients", "50",
			"--database", "bench", "--name", "every-path"},
		{"--host", "db.example", "--secret", "db-credentials"},
		{"--host", "fd00::7", "--port", "6432", "--secret", "pg", "--ca-secret", "pg-ca",
			"--transports", "pooler,tls,proxy,ssh,vpn,direct", "--clients", "1000", "--duration", "24h",
			"--repetitions", "20"},
		{"--host", "db", "--secret", "s", "--transports", "tls", "--duration", "1s", "--repetitions", "1",
			"--clients", "1"},
	} {
		out, err := plugin(append([]string{"init"}, args...)...)
		if err != nil {
			t.Errorf("init %v: %v", args, err)
			continue
		}
		tb := decodeStrict(t, out)
		if tb.Namespace != "db-team" {
			t.Errorf("init %v: namespace %q, want -n's db-team", args, tb.Namespace)
		}
		if err := c.Create(context.Background(), tb, client.DryRunAll); err != nil {
			t.Errorf("the API server refuses init %v: %v\n%s", args, err, out)
		}
	}
}
