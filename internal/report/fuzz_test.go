package report

import (
	"testing"
)

// FuzzDecode: any text in a termination message or a result ConfigMap is decoded or refused,
// never a panic; a decoded report encodes again within the termination message's MaxSize (when
// it carries a failure, which Encode may shorten) and decodes back.
func FuzzDecode(f *testing.F) {
	f.Add(`{"command":"run","result":{"tps":41873.2,"latencyAvgMs":0.09,"transactions":100}}`)
	f.Add(`{"failure":{"reason":"ServerUnreachable","message":"connection refused"}}`)
	f.Add(`{"command":"run","result":{"tps":1,"progress":[{"t":1,"tps":2,"lat":3}]},"tunnels":[{"tps":1}]}`)
	f.Add(`{"result":null}`)
	f.Fuzz(func(t *testing.T, message string) {
		r, err := Decode(message)
		if err != nil {
			return
		}
		b, err := Encode(*r)
		if err != nil {
			// A value JSON cannot carry back (none that Decode accepts); an error, not a panic.
			return
		}
		if r.Failure != nil && len(b) > MaxSize {
			t.Fatalf("a failure report of %d bytes exceeds MaxSize", len(b))
		}
		if _, err := Decode(string(b)); err != nil {
			t.Fatalf("an encoded report does not decode: %v\n%s", err, b)
		}
	})
}
