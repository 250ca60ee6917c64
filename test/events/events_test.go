package events

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestWaitReturnsTheEventsAboutTheObject(t *testing.T) {
	scheme := runtime.NewScheme()
	utilruntime.Must(eventsv1.AddToScheme(scheme))
	event := func(name, regarding, reason string) *eventsv1.Event {
		return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Regarding: corev1.ObjectReference{Name: regarding}, Reason: reason, Note: reason + " note"}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		event("a", "bench", "Accepted"), event("b", "bench", "Completed"), event("c", "other", "Failed"),
	).Build()
	got := Wait(t, c, "ns", "bench", time.Second, "Completed", "Accepted")
	if len(got) != 2 {
		t.Fatalf("got %d events, want the 2 about bench: %+v", len(got), got)
	}
	for _, e := range got {
		if e.Regarding.Name != "bench" {
			t.Errorf("event %s is about %s", e.Name, e.Regarding.Name)
		}
	}
}
