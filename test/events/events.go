// Package events checks, in tests, the Kubernetes Events the operator records about an object: the
// envtest suites and the end-to-end tests look for them the same way.
package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/test/poll"
)

// Wait polls the events in ns until those about the object named name include one of each of the
// reasons, and fails the test when they do not by timeout. It returns the events about the object,
// for checks of their notes.
func Wait(t testing.TB, c client.Client, ns, name string, timeout time.Duration, reasons ...string) []eventsv1.Event {
	t.Helper()
	var about []eventsv1.Event
	poll.Until(t, timeout, 200*time.Millisecond, "events "+strings.Join(reasons, ",")+" about "+name, func() error {
		list := &eventsv1.EventList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		about = about[:0]
		seen := map[string]bool{}
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				about = append(about, e)
				seen[e.Reason] = true
			}
		}
		for _, r := range reasons {
			if !seen[r] {
				return fmt.Errorf("no %s event (seen %v)", r, seen)
			}
		}
		return nil
	})
	return about
}
