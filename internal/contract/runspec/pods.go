package runspec

import "strconv"

// A run of several runner pods (Run.Pods > 1) is one Indexed Job: each pod runs its share of the
// load and they start their measured load together, at a moment the operator sets once all are
// ready, through the run's result ConfigMap (ReadyKey, StartKey).

// MaxPods bounds Run.Pods.
const MaxPods = 16

// PodIndexEnv is the variable Kubernetes sets in each pod of an Indexed Job: the pod's index, from
// 0, which decides its share of the load and its keys in the result ConfigMap.
const PodIndexEnv = "JOB_COMPLETION_INDEX"

// StartKey is where the operator writes, in a run's result ConfigMap, the moment (RFC 3339 with
// nanoseconds) at which every pod starts its measured load, once all are ready.
const StartKey = "start"

// ReadyKey is where runner pod i marks itself ready in the result ConfigMap (connected, warmed
// up), with the time it was.
func ReadyKey(i int) string { return "ready-" + strconv.Itoa(i) }

// ReportKey is where runner pod i of pods keeps its report: ResultKey for a run of one pod.
func ReportKey(pods, i int) string {
	if pods <= 1 {
		return ResultKey
	}
	return "report-" + strconv.Itoa(i) + ".json"
}

// LiveKeyOf is where runner pod i of pods keeps its live progress: LiveKey for a run of one pod.
func LiveKeyOf(pods, i int) string {
	if pods <= 1 {
		return LiveKey
	}
	return "live-" + strconv.Itoa(i) + ".json"
}

// WindowKey is where runner pod i writes, once its load has ended, the stretch its transactions
// covered ("from/to", RFC 3339 with nanoseconds); each pod waits for every pod's and cuts its
// figures to the stretch they all covered.
func WindowKey(i int) string { return "window-" + strconv.Itoa(i) }
