// Command tunnelbench-manager is the TunnelBench operator.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/controllers/benchmark"
	historycontroller "github.com/tunnelbench/tunnelbench/controllers/history"
	"github.com/tunnelbench/tunnelbench/controllers/schedule"
	"github.com/tunnelbench/tunnelbench/internal/history"
	"github.com/tunnelbench/tunnelbench/internal/operator/admission"
	"github.com/tunnelbench/tunnelbench/internal/operator/metrics"
	"github.com/tunnelbench/tunnelbench/internal/operator/metricsauth"
	"github.com/tunnelbench/tunnelbench/internal/operator/runseal"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"

	// Every transport type, those in their own packages included.
	_ "github.com/tunnelbench/tunnelbench/internal/transport/transports"
)

func main() {
	var (
		metricsAddr, probeAddr, runnerImage, pullPolicy, postgresImage                  string
		metricsSecure, leaderElect, enableHTTP2, networkPolicies, allowPrivileged       bool
		waitTimeout                                                                     time.Duration
		jobsTTL, maxReconciles, maxRunning, maxPerNamespace                             int
		watchNamespaces, lockNamespace, readerNamespace, readerSelector, historyURIFile string
		runSealSecret                                                                   string
		historyRetention                                                                history.Retention
		leaseDuration, renewDeadline, retryPeriod, reconcileTimeout                     time.Duration
		maxTimeout                                                                      time.Duration
		hook                                                                            webhookFlags
		endWait                                                                         time.Duration
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"address of the metrics endpoint (:8443 for HTTPS, :8080 for HTTP, 0 to disable)")
	flag.BoolVar(&metricsSecure, "metrics-secure", true,
		"serve metrics over HTTPS, authenticated and authorized through the API server")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"serve metrics over HTTP/2 too (off: HTTP/2 Rapid Reset and Stream Cancellation CVEs)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the health probes")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, so that only one replica reconciles")
	flag.DurationVar(&leaseDuration, "leader-elect-lease-duration", 60*time.Second,
		"how long a lease holds without renewal before another replica may take over")
	flag.DurationVar(&renewDeadline, "leader-elect-renew-deadline", 45*time.Second,
		"how long the leader keeps retrying a renewal before it gives up leading (and exits)")
	flag.DurationVar(&retryPeriod, "leader-elect-retry-period", 5*time.Second, "the interval between lease attempts")
	flag.StringVar(&watchNamespaces, "watch-namespaces", "",
		"comma-separated namespaces whose benchmarks the operator runs (empty: every namespace; it then needs its ClusterRole)")
	flag.DurationVar(&maxTimeout, "max-timeout", 6*time.Hour,
		"the longest spec.timeout a benchmark may ask for; a longer one fails at once (0: no bound)")
	flag.StringVar(&lockNamespace, "server-lock-namespace", "",
		"namespace of the Leases that let one benchmark at a time measure a server (the operator's own; empty: no Leases)")
	flag.DurationVar(&historyRetention.MaxAge, "history-max-age", 0,
		"the history store drops benchmarks completed longer ago (0: kept at any age)")
	flag.IntVar(&historyRetention.MaxPerSeries, "history-max-per-series", 0,
		fmt.Sprintf("the history store keeps the newest benchmarks of each series (0: all; else at least %d, "+
			"what the largest regression window reads)", history.MinPerSeries))
	flag.StringVar(&runSealSecret, "run-seal-secret", "",
		"namespace/name of the Secret of the key that seals the schedules' runs, made at start when missing "+
			"(the operator's own namespace; needed by schedules)")
	flag.StringVar(&readerNamespace, "node-reader-namespace", "",
		"namespace of the node readers that serve the server pod's CPU accounting (empty: none; the server's CPU is unknown)")
	flag.StringVar(&readerSelector, "node-reader-selector", "app.kubernetes.io/component=node-reader",
		"label selector of the node readers' pods")
	flag.BoolVar(&networkPolicies, "network-policies", true,
		"give the SSH gateway and shared poolers a NetworkPolicy admitting only their benchmark's runner pods")
	flag.BoolVar(&allowPrivileged, "allow-privileged-transports", false,
		"run transports whose pods are privileged: vpn.kind openvpn (root with NET_ADMIN and a TUN device); "+
			"refused at admission otherwise")
	flag.IntVar(&maxRunning, "max-running-benchmarks", 0,
		"benchmarks running at once in the cluster; the others wait in phase Queued, their clocks not started (0: no limit)")
	flag.IntVar(&maxPerNamespace, "max-running-benchmarks-per-namespace", 0,
		"benchmarks one namespace may run at once, so that one team cannot hold every place (0: no limit of its own)")
	flag.IntVar(&maxReconciles, "max-concurrent-reconciles", 2, "benchmarks reconciled at once")
	flag.DurationVar(&reconcileTimeout, "reconcile-timeout", 30*time.Second,
		"bound of one reconcile pass and of every API call in it")
	flag.StringVar(&historyURIFile, "history-uri-file", "",
		"a file holding the history store's connection URI (its Secret's key uri, mounted); empty: no store")
	flag.StringVar(&runnerImage, "runner-image", "tunnelbench/runner:latest", "default image of the pgbench runner pods")
	flag.StringVar(&pullPolicy, "runner-image-pull-policy", string(corev1.PullIfNotPresent), "pull policy of the runner image")
	flag.DurationVar(&waitTimeout, "runner-wait-timeout", 2*time.Minute, "how long a runner waits for the server")
	flag.StringVar(&postgresImage, "postgres-image", "ghcr.io/cloudnative-pg/postgresql:17",
		"PostgreSQL image of the CloudNativePG clusters spec.server.managed creates when it names none")
	flag.IntVar(&jobsTTL, "ttl-seconds-after-finished", -1,
		"seconds an ended benchmark keeps its Jobs and pods when its spec.ttlSecondsAfterFinished is unset (-1 keeps them until it is deleted)")
	hook.bind(flag.CommandLine)
	flag.DurationVar(&endWait, "end-benchmarks", 0,
		"do not run: cancel every benchmark, wait this long for the operator to end and release them, "+
			"release those it did not, and exit (the chart's pre-delete hook)")
	opts := zap.Options{Development: false}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(benchv1.AddToScheme(scheme))

	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: metricsSecure, TLSOpts: tlsOpts}
	if metricsSecure {
		metricsOpts.FilterProvider = metricsauth.Provider
	}

	restConfig := ctrl.GetConfigOrDie()
	if endWait > 0 {
		if err := endBenchmarks(restConfig, scheme, splitList(watchNamespaces), endWait, setupLog); err != nil {
			setupLog.Error(err, "Cannot end the benchmarks")
			os.Exit(1)
		}
		return
	}
	if err := hook.prepare(restConfig, scheme, setupLog); err != nil {
		setupLog.Error(err, "Cannot prepare the webhook's certificate")
		os.Exit(1)
	}
	seal, err := runSeal(restConfig, scheme, runSealSecret)
	if err != nil {
		setupLog.Error(err, "Cannot read the run seal's key")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		WebhookServer:          hook.server(tlsOpts),
		Cache:                  benchmark.CacheOptions(splitList(watchNamespaces)),
		Metrics:                metricsOpts,
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "tunnelbench.bench.tunnelbench.io",
		LeaseDuration:          &leaseDuration,
		RenewDeadline:          &renewDeadline,
		RetryPeriod:            &retryPeriod,
		// A replaced leader hands the lease over at once instead of after leaseDuration.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		setupLog.Error(err, "Cannot create the manager")
		os.Exit(1)
	}
	// One policy, the webhook's and the controller's: what the administrator allows every benchmark.
	policy := admission.Policy{DefaultRunnerImage: runnerImage, RunnerImages: splitList(hook.allowedImages),
		AllowPrivileged: allowPrivileged, CreatorUnchecked: hook.port == 0}
	reconciler := &benchmark.TunnelBenchmarkReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("tunnelbench-controller"),
		Metrics:   metrics.Default,
		Defaults: specs.RunnerDefaults{
			Image: runnerImage, PullPolicy: corev1.PullPolicy(pullPolicy), WaitTimeout: waitTimeout,
		},
		PostgresImage:          postgresImage,
		MaxRunning:             maxRunning,
		MaxRunningPerNamespace: maxPerNamespace,
		LockNamespace:          lockNamespace,
		NodeReaderNamespace:    readerNamespace,
		NodeReaderSelector:     readerSelector,
		MaxTimeout:             maxTimeout,
		NetworkPolicies:        networkPolicies,
		Policy:                 policy,
	}
	if jobsTTL >= 0 {
		ttl := time.Duration(jobsTTL) * time.Second
		reconciler.JobsTTL = &ttl
	}
	if err := reconciler.SetupWithManager(mgr, controller.Options{
		MaxConcurrentReconciles: maxReconciles, ReconciliationTimeout: reconcileTimeout}); err != nil {
		setupLog.Error(err, "Cannot set up the controller")
		os.Exit(1)
	}
	access := hook.access(mgr, policy)
	if n := historyRetention.MaxPerSeries; n != 0 && n < history.MinPerSeries || historyRetention.MaxAge < 0 {
		setupLog.Error(fmt.Errorf("--history-max-per-series %d is below %d, what a schedule's largest regression window "+
			"reads, or --history-max-age %s is negative", n, history.MinPerSeries, historyRetention.MaxAge), "Invalid history retention")
		os.Exit(1)
	}
	if err := setupSchedules(mgr, historyURIFile, historyRetention, access, seal, setupLog); err != nil {
		setupLog.Error(err, "Cannot set up the schedules")
		os.Exit(1)
	}
	if err := hook.setup(mgr, access); err != nil {
		setupLog.Error(err, "Cannot set up the admission webhook")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", hook.ready(mgr)))
	setupLog.Info("Starting the manager", "runnerImage", runnerImage)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}

// setupSchedules adds the schedules' controller (which asks access, before each run, whether the
// schedule's author still may do what it does) and, with a history store (historyURIFile, the
// store's Secret's key uri mounted as a file), the recorder; the store's schema is migrated at
// start, or at the first write when the store, or its Secret, is not there yet.
func setupSchedules(mgr ctrl.Manager, historyURIFile string, retention history.Retention, access *admission.Validator,
	seal runseal.Key, log logr.Logger) error {
	var store *history.Store
	if historyURIFile != "" {
		store = history.OpenFile(historyURIFile)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := store.Migrate(ctx); err != nil {
				log.Info("The history store is not ready yet: its schema is migrated at the first write", "reason", store.Mask(err.Error()))
				return
			}
			log.Info("The history store is ready")
		}()
		if retention != (history.Retention{}) {
			if err := mgr.Add(&history.Pruner{Store: store, Retention: retention, Interval: time.Hour,
				Log: log.WithName("history-retention")}); err != nil {
				return err
			}
		}
		if err := (&historycontroller.Reconciler{Client: mgr.GetClient(), Store: store, Seal: seal}).SetupWithManager(mgr,
			controller.Options{MaxConcurrentReconciles: 1}); err != nil {
			return err
		}
	}
	return (&schedule.ScheduledTunnelBenchmarkReconciler{Client: mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("tunnelbench-schedule"), Metrics: metrics.DefaultSchedules, History: store, Access: access,
		Seal: seal,
	}).SetupWithManager(mgr, controller.Options{MaxConcurrentReconciles: 1})
}

// splitList reads a comma-separated flag, ignoring blanks.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
