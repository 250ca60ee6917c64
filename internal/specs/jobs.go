package specs

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/runner"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// RunnerContainerName is the name of the container that runs pgbench.
const RunnerContainerName = "runner"

// RunnerUID is the unprivileged user the runner runs as.
const RunnerUID = 65532

// RunnerDefaults are the operator-wide settings of runner pods.
type RunnerDefaults struct {
	Image      string
	PullPolicy corev1.PullPolicy
	// WaitTimeout bounds the runner's wait for the server.
	WaitTimeout time.Duration
}

// JobRequest describes one Job to build.
type JobRequest struct {
	Benchmark *benchv1.TunnelBenchmark
	// Transport is the transport's name, or benchv1.InitTransportLabel for initialization.
	Transport  string
	Connection transport.Connection
	// PgbenchArgs are pgbench's arguments.
	PgbenchArgs []string
	// Init marks the `pgbench -i` Job.
	Init bool
	// ActiveDeadline is how long the Job may run: what remains of spec.timeout.
	ActiveDeadline time.Duration
	Defaults       RunnerDefaults
}

// Labels returns the labels of a benchmark's objects for one transport.
func Labels(tb *benchv1.TunnelBenchmark, transportName string) map[string]string {
	return map[string]string{
		benchv1.LabelName:      "tunnelbench",
		benchv1.LabelComponent: "runner",
		benchv1.LabelManagedBy: "tunnelbench-operator",
		benchv1.LabelBenchmark: tb.Name,
		benchv1.LabelTransport: transportName,
	}
}

// Job builds the Job that runs pgbench for one transport. It never retries (backoffLimit 0): a
// second attempt would mix two measurements, and the failure is what the user needs to see.
func Job(req JobRequest) *batchv1.Job {
	tb := req.Benchmark
	labels := Labels(tb, req.Transport)
	runnerSpec := benchv1.RunnerSpec{}
	if tb.Spec.Runner != nil {
		runnerSpec = *tb.Spec.Runner
	}

	image, pullPolicy := runnerImage(tb, req.Defaults)

	args := []string{"run", "--wait-timeout=" + req.Defaults.WaitTimeout.String()}
	if req.Init {
		args = append(args, "--init")
	}
	if t := req.Connection.Tunnels; t != nil {
		args = append(args, fmt.Sprintf("--tunnels=%d", t.Count), fmt.Sprintf("--tunnel-port=%d", transport.TunnelBasePort),
			"--ssh-log-dir="+transport.SSHLogDir)
	}
	if req.Connection.PoolerKind != "" {
		args = append(args, "--pooler="+req.Connection.PoolerKind)
	}
	if req.Connection.PoolerMetrics != "" {
		args = append(args, "--pooler-metrics="+req.Connection.PoolerMetrics)
	}
	if storm := tb.Spec.Load.ConnectionStorm; storm != nil && !req.Init {
		args = append(args, fmt.Sprintf("--storm=%d", storm.Connections))
	}
	args = append(args, "--")
	args = append(args, req.PgbenchArgs...)

	env := append([]corev1.EnvVar{
		{Name: "HOME", Value: "/tmp"},
		{Name: "PGAPPNAME", Value: "tunnelbench/" + tb.Name + "/" + req.Transport},
	}, req.Connection.Env...)
	if tb.Spec.Load.Script != "" && !req.Init {
		env = append(env, corev1.EnvVar{Name: runner.ScriptEnv, Value: tb.Spec.Load.Script})
	}

	mounts := append([]corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}, req.Connection.Mounts...)
	// /tmp is memory-backed: a pooler sidecar writes its auth file, which holds the password, there.
	volumes := append([]corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
		req.Connection.Volumes...)
	if req.Connection.Sidecar != nil {
		volumes = append(volumes, req.Connection.Sidecar.Volumes...)
	}

	deadline := max(int64(req.ActiveDeadline.Seconds()), 1)

	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            tb.JobName(req.Transport),
			Namespace:       tb.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tb, benchv1.GroupVersion.WithKind("TunnelBenchmark"))},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					NodeSelector:                  runnerSpec.NodeSelector,
					Tolerations:                   runnerSpec.Tolerations,
					Affinity:                      runnerSpec.Affinity,
					SecurityContext:               restrictedPodSecurity(),
					InitContainers: append(tunnelSidecars(req.Connection.Tunnels, image, pullPolicy),
						poolerSidecar(req.Connection.Sidecar, image, pullPolicy)...),
					Containers: []corev1.Container{{
						Name:                     RunnerContainerName,
						Image:                    image,
						ImagePullPolicy:          pullPolicy,
						Command:                  []string{"tunnelbench-runner"},
						Args:                     args,
						Env:                      env,
						VolumeMounts:             mounts,
						Resources:                runnerResources(runnerSpec.Resources),
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext:          restrictedContainerSecurity(),
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

// runnerImage is the runner's image and pull policy: the benchmark's, else the operator's.
func runnerImage(tb *benchv1.TunnelBenchmark, defaults RunnerDefaults) (string, corev1.PullPolicy) {
	image, pullPolicy := defaults.Image, defaults.PullPolicy
	if r := tb.Spec.Runner; r != nil {
		if r.Image != "" {
			image = r.Image
		}
		if r.ImagePullPolicy != "" {
			pullPolicy = r.ImagePullPolicy
		}
	}
	return image, pullPolicy
}

// tunnelSidecars are the native sidecars (init containers that keep running) of the ssh
// transport, one `ssh -N -L` per tunnel. Their startup probe holds pgbench back until every
// forward accepts connections; the kubelet stops them once pgbench has ended, so the Job still
// completes.
func tunnelSidecars(t *transport.Tunnels, image string, pullPolicy corev1.PullPolicy) []corev1.Container {
	if t == nil {
		return nil
	}
	var out []corev1.Container
	for i := 0; i < t.Count; i++ {
		tn := t.Tunnel(i)
		out = append(out, corev1.Container{
			Name: fmt.Sprintf("tunnel-%d", i), Image: image, ImagePullPolicy: pullPolicy,
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
			Command:       []string{"ssh"},
			Args:          tn.SSHArgs(),
			Env:           []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
			StartupProbe: &corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
					"tunnelbench-runner", "probe", fmt.Sprintf("127.0.0.1:%d", tn.LocalPort)}}},
				PeriodSeconds: 1, FailureThreshold: 60,
			},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
			SecurityContext: restrictedContainerSecurity(),
			VolumeMounts: []corev1.VolumeMount{
				{Name: "tmp", MountPath: "/tmp"},
				{Name: "ssh-client", MountPath: transport.SSHClientDir, ReadOnly: true},
				{Name: "ssh-logs", MountPath: transport.SSHLogDir},
			},
		})
	}
	return out
}

func restrictedPodSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](RunnerUID),
		RunAsGroup:     ptr.To[int64](RunnerUID),
		FSGroup:        ptr.To[int64](RunnerUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func restrictedContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
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
