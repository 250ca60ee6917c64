package chaosmesh

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Injection is a NetworkChaos's state as chaos-mesh reports it.
type Injection struct {
	// Injected is true once chaos-mesh selected pods and injected into every one of them.
	Injected bool
	// Failure is chaos-mesh's own message when an injection failed (the latest failed Apply
	// event of a pod): chaos-mesh retries it, but a failure caused by the node (no sch_netem)
	// never heals by itself.
	Failure string
	// Waiting says what it still waits for.
	Waiting string
}

// InjectionOf reads a stored NetworkChaos's status (conditions Selected and AllInjected, and the
// per-pod records' Apply events).
func InjectionOf(o *unstructured.Unstructured) Injection {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	state := map[string]string{}
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok {
			typ, _ := m["type"].(string)
			status, _ := m["status"].(string)
			state[typ] = status
		}
	}
	records, _, _ := unstructured.NestedSlice(o.Object, "status", "experiment", "containerRecords")
	var failures []string
	for _, r := range records {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		events, _ := m["events"].([]any)
		// The latest Apply event of the pod decides: a retry that succeeded clears the failure.
		var last map[string]any
		for _, e := range events {
			if em, ok := e.(map[string]any); ok && em["operation"] == "Apply" {
				last = em
			}
		}
		if last != nil && last["type"] == "Failed" {
			msg, _ := last["message"].(string)
			failures = append(failures, fmt.Sprintf("%s: %s", id, msg))
		}
	}
	switch {
	case state["AllInjected"] == "True":
		return Injection{Injected: true}
	case len(failures) > 0:
		return Injection{Failure: strings.Join(failures, "; ")}
	case state["Selected"] != "True":
		return Injection{Waiting: fmt.Sprintf("chaos-mesh to select the pods of NetworkChaos %s", o.GetName())}
	default:
		return Injection{Waiting: fmt.Sprintf("chaos-mesh to inject NetworkChaos %s", o.GetName())}
	}
}

// Undone reports whether nothing chaos-mesh injected for a NetworkChaos remains in a pod: no
// pod's record counts more injections than recoveries. chaos-mesh's own finalizer waits for
// exactly that.
func Undone(o *unstructured.Unstructured) bool {
	records, _, _ := unstructured.NestedSlice(o.Object, "status", "experiment", "containerRecords")
	for _, r := range records {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		injected, _, _ := unstructured.NestedInt64(m, "injectedCount")
		recovered, _, _ := unstructured.NestedInt64(m, "recoveredCount")
		if injected > recovered {
			return false
		}
	}
	return true
}
