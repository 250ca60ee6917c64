package benchmark

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

func (r *TunnelBenchmarkReconciler) setCondition(tb *benchv1.TunnelBenchmark, typ string,
	status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&tb.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: bounded.Text(message, bounded.ConditionMessage),
		ObservedGeneration: tb.Generation,
	})
}

func (r *TunnelBenchmarkReconciler) hasCondition(tb *benchv1.TunnelBenchmark, typ string,
	status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(tb.Status.Conditions, typ)
	return c != nil && c.Status == status && c.Reason == reason
}

func (r *TunnelBenchmarkReconciler) event(tb *benchv1.TunnelBenchmark, eventType, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	text := bounded.Text(fmt.Sprintf(note, args...), bounded.EventNote)
	key := eventType + "/" + reason + "/" + text
	r.pending.add(client.ObjectKeyFromObject(tb), key, func() { r.Recorder.Eventf(tb, nil, eventType, reason, action, "%s", text) })
}

// pendingEvents holds a pass's events until its status is stored. A pass whose status write
// conflicts is started over from what is stored and does the same things again: its events are
// kept, and the next pass's identical ones are not added again, so that an event shows once
// ("Accepted", not "Accepted (x2)") while one about what only the lost pass did (the Job it
// created) is still recorded. controller-runtime never reconciles one benchmark in two workers at
// once, so a benchmark's pending events are one pass's and its retries'.
type pendingEvents struct {
	mu    sync.Mutex
	byKey map[types.NamespacedName][]pendingEvent
}

type pendingEvent struct {
	key    string
	record func()
}

func (p *pendingEvents) add(tb types.NamespacedName, key string, record func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byKey == nil {
		p.byKey = map[types.NamespacedName][]pendingEvent{}
	}
	for _, e := range p.byKey[tb] {
		if e.key == key {
			return
		}
	}
	p.byKey[tb] = append(p.byKey[tb], pendingEvent{key: key, record: record})
}

// take removes and returns the benchmark's pending events.
func (p *pendingEvents) take(tb types.NamespacedName) []pendingEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.byKey[tb]
	delete(p.byKey, tb)
	return out
}
