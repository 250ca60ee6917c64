package report

import (
	"testing"
	"unicode/utf8"

	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
)

// FuzzDecode: any text in a termination message or a result ConfigMap is decoded or refused,
// never a panic; a decoded report encodes again within the termination message's MaxSize (when
// it carries a failure, which Encode may shorten) and decodes back; every text it holds is within
// what status keeps (internal/contract/bounded).
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
		r.Texts(func(field, s string) string {
			if limit := bounded.Field; len(s) > bounded.ReportMessage || (field != ".Failure.Message" && len(s) > limit) ||
				!utf8.ValidString(s) {
				t.Fatalf("decoded text %s of %d bytes (valid UTF-8: %v): Decode must bound it", field, len(s), utf8.ValidString(s))
			}
			return s
		})
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
