// Command load applies many benchmarks at once to the operator installed in the cluster of
// KUBECONFIG (hack/bench/load.sh: the local one) and reports what they cost it: the time until
// every one has ended, how they ended, the operator's peak memory (VmHWM of its process, read from
// /proc on this node) and its API requests per benchmark (its client's own metric,
// rest_client_requests_total, read from its authenticated metrics endpoint), and its reconcile
// queue at the end.
//
//	go run ./hack/bench/load [-benchmarks 100] [-servers 2]
//
// Each benchmark is one second of `select 1;` through direct, one repetition, with a runner pod
// of 100m: the operator's work, not pgbench's, is measured. The benchmarks spread over the servers
// (one PostgreSQL each, in its own namespace); those of one server queue behind each other, and
// the chart's maxRunningBenchmarks bounds them all.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/test/fixture"
)

const (
	operatorNamespace = "tunnelbench-system"
	release           = "tunnelbench"
	rssTarget         = 64 << 20
)

func main() {
	benchmarks := flag.Int("benchmarks", 100, "benchmarks applied at once")
	servers := flag.Int("servers", 2, "PostgreSQL servers they spread over")
	image := flag.String("postgres-image", "", "the PostgreSQL image of the servers")
	timeout := flag.Duration("timeout", 30*time.Minute, "how long to wait for every benchmark to end")
	flag.Parse()
	if err := run(*benchmarks, *servers, *image, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(n, servers int, image string, timeout time.Duration) error {
	ctx := context.Background()
	c, cfg, err := fixture.Client()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	var namespaces []string
	for i := 1; i <= servers; i++ {
		ns := fmt.Sprintf("tunnelbench-load-%d", i)
		namespaces = append(namespaces, ns)
		if err := freshNamespace(ctx, c, ns); err != nil {
			return err
		}
		fmt.Printf("==> PostgreSQL %d of %d (namespace %s)\n", i, servers, ns)
		if _, err := fixture.DeployPostgres(ctx, c, ns, image, 3*time.Minute); err != nil {
			return fmt.Errorf("cannot deploy PostgreSQL in %s: %w", ns, err)
		}
	}
	scrape, err := metricsReader(ctx, c, cs)
	if err != nil {
		return err
	}
	pid, err := operatorPID()
	if err != nil {
		return err
	}
	before, err := scrape()
	if err != nil {
		return err
	}

	fmt.Printf("==> Applying %d benchmarks over %d servers\n", n, servers)
	start := time.Now()
	for i := range n {
		if err := c.Create(ctx, loadBenchmark(namespaces[i%servers], fmt.Sprintf("load-%03d", i+1))); err != nil {
			return err
		}
	}
	applied := time.Since(start)
	peakRSS, phases, err := waitForAll(ctx, c, namespaces, n, pid, timeout)
	drained := time.Since(start)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	after, err := scrape()
	if err != nil {
		return err
	}
	hwm, _ := procStatus(pid, "VmHWM")

	requests := after.sum("rest_client_requests_total") - before.sum("rest_client_requests_total")
	fmt.Printf("\n| %d benchmarks, %d servers | |\n|---|---|\n", n, servers)
	fmt.Printf("| applied in | %.1f s |\n", applied.Seconds())
	fmt.Printf("| every one ended after | %.0f s (%.1f s per benchmark) |\n", drained.Seconds(), drained.Seconds()/float64(n))
	fmt.Printf("| how they ended | %s |\n", describePhases(phases))
	fmt.Printf("| operator RSS, peak while they ran (sampled each second) | %.1f MiB |\n", float64(peakRSS)/(1<<20))
	fmt.Printf("| operator VmHWM (peak since it started) | %.1f MiB (target ≤ %d MiB) |\n", float64(hwm)/(1<<20), rssTarget>>20)
	fmt.Printf("| API requests of the operator | %.0f, %.1f per benchmark |\n", requests, requests/float64(n))
	// The HTTP methods: a list is a GET.
	for _, verb := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
		if d := after.sumWith("rest_client_requests_total", `method="`+verb+`"`) -
			before.sumWith("rest_client_requests_total", `method="`+verb+`"`); d > 0 {
			fmt.Printf("| … %s | %.1f per benchmark |\n", verb, d/float64(n))
		}
	}
	fmt.Printf("| reconcile queue depth at the end | %.0f |\n", after.sumWith("workqueue_depth", `name="tunnelbenchmark"`))
	if phases[benchv1.PhaseCompleted] != n {
		return fmt.Errorf("%d of %d benchmarks completed", phases[benchv1.PhaseCompleted], n)
	}
	for _, ns := range namespaces {
		_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	return nil
}

// loadBenchmark is a second of select 1 through direct: the operator's work, not pgbench's.
func loadBenchmark(ns, name string) *benchv1.TunnelBenchmark {
	return &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server: benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: fixture.ServiceName + "." + ns + ".svc",
				Database: "app", CredentialsSecret: benchv1.LocalObjectReference{Name: fixture.CredentialsSecret}}},
			Transports: []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}},
			Load: benchv1.LoadSpec{Script: "select 1;", Clients: 1, Threads: 1, Repetitions: 1,
				Duration: &metav1.Duration{Duration: time.Second}, Warmup: &metav1.Duration{},
				ProgressInterval: &metav1.Duration{Duration: time.Second}},
			Runner: &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}},
			Timeout: &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
}

func freshNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, ns); err == nil || !strings.Contains(err.Error(), "not found") {
		for c.Get(ctx, client.ObjectKeyFromObject(ns), ns) == nil {
			time.Sleep(time.Second)
		}
	}
	ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	return c.Create(ctx, ns)
}

// waitForAll polls until every benchmark has ended, sampling the operator's RSS each second.
func waitForAll(ctx context.Context, c client.Client, namespaces []string, n, pid int,
	timeout time.Duration) (peak int64, phases map[benchv1.Phase]int, err error) {
	deadline := time.Now().Add(timeout)
	for {
		if rss, err := procStatus(pid, "VmRSS"); err == nil && rss > peak {
			peak = rss
		}
		phases = map[benchv1.Phase]int{}
		for _, ns := range namespaces {
			list := &benchv1.TunnelBenchmarkList{}
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				return peak, nil, err
			}
			for _, tb := range list.Items {
				phases[tb.Status.Phase]++
			}
		}
		ended := phases[benchv1.PhaseCompleted] + phases[benchv1.PhaseFailed] + phases[benchv1.PhaseCancelled]
		if ended == n {
			return peak, phases, nil
		}
		if time.Now().After(deadline) {
			return peak, phases, fmt.Errorf("after %s: %s", timeout, describePhases(phases))
		}
		fmt.Printf("\r%s   ", describePhases(phases))
		time.Sleep(time.Second)
	}
}

func describePhases(phases map[benchv1.Phase]int) string {
	var parts []string
	for p, k := range phases {
		name := string(p)
		if name == "" {
			name = "new"
		}
		parts = append(parts, fmt.Sprintf("%d %s", k, name))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// operatorPID finds the operator's process on this node (the local cluster runs its containers
// here).
func operatorPID() (int, error) {
	out, err := exec.Command("pgrep", "-f", "^/usr/local/bin/tunnelbench-manager").Output()
	if err != nil {
		return 0, fmt.Errorf("no tunnelbench-manager process on this machine (the local cluster's operator): %w", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 1 {
		return 0, fmt.Errorf("%d tunnelbench-manager processes", len(fields))
	}
	return strconv.Atoi(fields[0])
}

// procStatus reads a memory figure of /proc/<pid>/status, in bytes.
func procStatus(pid int, key string) (int64, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}

// exposition is the text of a Prometheus scrape.
type exposition string

// sumWith adds the samples of a metric whose labels contain every filter.
func (e exposition) sumWith(metric string, filters ...string) float64 {
	total := 0.0
	for _, line := range strings.Split(string(e), "\n") {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		match := true
		for _, f := range filters {
			match = match && strings.Contains(line, f)
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); match && err == nil {
			total += v
		}
	}
	return total
}

func (e exposition) sum(metric string) float64 { return e.sumWith(metric) }

// metricsReader returns a scrape of the operator's metrics endpoint as a scraper does it: a
// ServiceAccount token bound to the chart's metrics-reader ClusterRole, HTTPS to the pod.
func metricsReader(ctx context.Context, c client.Client, cs *kubernetes.Clientset) (func() (exposition, error), error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "load-bench"}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tunnelbench-load-bench"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: release + "-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}}
	for _, o := range []client.Object{sa, binding} {
		if err := c.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			return nil, err
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": "tunnelbench", "app.kubernetes.io/instance": release}); err != nil {
		return nil, err
	}
	if len(pods.Items) != 1 || pods.Items[0].Status.PodIP == "" {
		return nil, fmt.Errorf("%d operator pods", len(pods.Items))
	}
	url := fmt.Sprintf("https://%s:8443/metrics", pods.Items[0].Status.PodIP)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		// The operator's serving certificate is self-signed; the token is what is checked.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, on the project's own pod
	return func() (exposition, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+tr.Status.Token)
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", url, resp.Status)
		}
		return exposition(b), err
	}, nil
}

func ptr[T any](v T) *T { return &v }
