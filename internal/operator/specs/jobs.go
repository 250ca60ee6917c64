package specs

import (
	"cmp"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// JobRequest describes one Job to build.
type JobRequest struct {
	Benchmark *benchv1.TunnelBenchmark
	// Ref is the run: transport, sweep point and round (from 1); the transport
	// benchv1.InitTransportLabel and round 0 for initialization.
	Ref benchv1.RunRef
	// Pod is what the transport adds to the runner pod.
	Pod Pod
	// Run is what the runner is told (RunFor, then the transport's part); Run.Init marks the
	// `pgbench -i` Job.
	Run runspec.Run
	// ActiveDeadline is how long the Job may run: what remains of spec.timeout.
	ActiveDeadline time.Duration
	Defaults       RunnerDefaults
}

// Job builds the Job that runs pgbench for one transport. It never retries (backoffLimit 0): a
// second attempt would mix two measurements, and the failure is what the user needs to see.
func Job(req JobRequest) *batchv1.Job {
	tb := req.Benchmark
	runnerSpec := benchv1.RunnerSpec{}
	if tb.Spec.Runner != nil {
		runnerSpec = *tb.Spec.Runner
	}
	image, pullPolicy := RunnerImage(tb, req.Defaults)
	meta := OwnedMeta(tb, JobName(tb, req.Ref), RunnerComponent, req.Ref.Transport)
	serviceAccount := ""
	volumes := append([]corev1.Volume{TmpVolume()}, req.Pod.Volumes...)
	mounts := append([]corev1.VolumeMount{{Name: runspec.TmpVolume, MountPath: runspec.TmpMountPath}}, req.Pod.Mounts...)
	if req.Ref.Round > 0 {
		// A measured run stores its report in its result ConfigMap (ResultConfigMap).
		runLabels(tb, req.Ref, meta.Labels)
		req.Run.ResultConfigMap = meta.Name
		serviceAccount = tb.RunnerAccountName()
		v, m := apiAccess()
		volumes, mounts = append(volumes, v), append(mounts, m)
	}

	env := append([]corev1.EnvVar{
		{Name: "HOME", Value: runspec.TmpMountPath},
		{Name: "PGAPPNAME", Value: "tunnelbench/" + tb.Name + "/" + req.Ref.Transport},
	}, req.Pod.Env...)
	if req.Run.Load.Script {
		env = append(env, corev1.EnvVar{Name: runspec.ScriptEnv, Value: tb.Spec.Load.Script})
	}
	deadline := max(int64(req.ActiveDeadline.Seconds()), 1)

	job := &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            serviceAccount,
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					NodeSelector:                  runnerSpec.NodeSelector,
					Tolerations:                   runnerSpec.Tolerations,
					Affinity:                      runnerSpec.Affinity,
					SecurityContext:               RestrictedPodSecurity(),
					InitContainers:                req.Pod.Sidecars,
					Containers: []corev1.Container{{
						Name:            runspec.RunnerContainerName,
						Image:           image,
						ImagePullPolicy: pullPolicy,
						Command:         []string{"tunnelbench-runner"},
						// The runner's flags are rendered by the contract alone, never by hand here.
						Args:                     append([]string{"run"}, req.Run.Args()...),
						Env:                      env,
						VolumeMounts:             mounts,
						Resources:                runnerResources(runnerSpec.Resources),
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext:          RestrictedContainerSecurity(),
					}},
					Volumes: volumes,
				},
			},
		},
	}
	if pods := req.Run.Pods; pods > 1 {
		indexedJob(job, runnerSpec, pods)
	}
	return job
}

// indexedJob makes a run's Job one of several pods: an Indexed Job whose pods take their share
// by their index (runspec.PodIndexEnv), all at once, spread across nodes by default.
func indexedJob(job *batchv1.Job, runner benchv1.RunnerSpec, pods int) {
	job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	job.Spec.Completions, job.Spec.Parallelism = ptr.To(int32(pods)), ptr.To(int32(pods))
	spec := &job.Spec.Template.Spec
	spec.TopologySpreadConstraints = runner.TopologySpreadConstraints
	if len(spec.TopologySpreadConstraints) == 0 && runner.Affinity == nil {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: job.Labels},
		}}
	}
}

// JobName is the name of the Job of a run, or of the initialization (round 0).
func JobName(tb *benchv1.TunnelBenchmark, ref benchv1.RunRef) string {
	if ref.Round == 0 {
		return tb.JobName(ref.Transport)
	}
	return tb.RunJobName(ref)
}

// runLabels marks what a measured run's objects measure: its round, and its sweep's point.
func runLabels(tb *benchv1.TunnelBenchmark, ref benchv1.RunRef, labels map[string]string) {
	labels[benchv1.LabelRound] = itoa(ref.Round)
	if _, values := tb.Spec.Sweep.Parameter(); len(values) > 0 {
		labels[benchv1.LabelPoint] = itoa(values[ref.Point])
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

// RunFor is what the runner of one of a benchmark's Jobs is told before the transport adds its
// part (tunnels, a pooler): the load, or the initialization when init is set.
func RunFor(tb *benchv1.TunnelBenchmark, init bool, waitTimeout time.Duration) runspec.Run {
	r := runspec.Run{Init: init, WaitTimeout: waitTimeout, Tunnels: 1}
	mysql := tb.Spec.Server.EffectiveEngine() == benchv1.EngineMySQL
	if mysql {
		r.Engine = runspec.EngineMySQL
	}
	if c := tb.Spec.Load.Copy; c != nil {
		// The initialization creates the data set; each measured run copies it once.
		r.Copy = runspec.Copy{Bytes: c.Size.Value(), Data: string(cmp.Or(c.Data, benchv1.DefaultCopyData))}
		return r
	}
	if init {
		r.Scale = int(max(tb.Spec.Load.Scale, benchv1.DefaultScale))
		return r
	}
	r.Load = LoadFor(tb.Spec.Load)
	if mysql {
		// sysbench picks its rows by the table's size, which it does not read from the table.
		r.Scale = int(max(tb.Spec.Load.Scale, benchv1.DefaultScale))
	}
	if pods := tb.RunnerPods(); pods > 1 {
		// Omitted for one, as the flags render it.
		r.Pods = pods
	}
	if storm := tb.Spec.Load.ConnectionStorm; storm != nil {
		r.Storm = storm.Connections
	}
	r.Warmup = tb.WarmupDuration()
	return r
}

// runnerResources applies the default requests: a BestEffort runner gets almost no CPU share under
// load and would measure the scheduler instead of the path.
func runnerResources(custom *corev1.ResourceRequirements) corev1.ResourceRequirements {
	if custom != nil {
		return *custom
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("500m"),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
		},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
}
