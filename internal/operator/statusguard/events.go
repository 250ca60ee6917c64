package statusguard

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

// Event API bounds (events.k8s.io/v1 validation): a reason and an action of at most 128
// characters, a note under 1,024 bytes.
const (
	maxEventReason = 128
	maxEventAction = 128
)

// Recorder returns rec whose every event is within the Event API's bounds: the note cut as
// bounded.Text cuts (its beginning and its end kept), reason and action cut to theirs. An event
// over a bound is dropped by the API, silently for the user: a Regressed note naming several
// transports was. Every controller's SetupWithManager wraps its recorder with it.
func Recorder(rec events.EventRecorder) events.EventRecorder {
	if _, ok := rec.(boundedRecorder); ok || rec == nil {
		return rec
	}
	return boundedRecorder{next: rec}
}

type boundedRecorder struct{ next events.EventRecorder }

func (b boundedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	text := note
	if len(args) > 0 {
		text = fmt.Sprintf(note, args...)
	}
	b.next.Eventf(regarding, related, eventtype, bounded.Text(reason, maxEventReason), bounded.Text(action, maxEventAction),
		"%s", bounded.Text(text, bounded.EventNote))
}
