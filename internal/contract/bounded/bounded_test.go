package bounded

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	long := "ERROR:  invalid input syntax for type integer: \"" + strings.Repeat("x", 40000) + "\" at the end"
	tests := []struct {
		name       string
		in         string
		limit      int
		want       string // exact result, when set
		head, tail string // otherwise: what it keeps at both ends
	}{
		{name: "short text unchanged", in: "pgbench: error: connection refused", limit: 100,
			want: "pgbench: error: connection refused"},
		{name: "exactly the limit", in: strings.Repeat("a", 10), limit: 10, want: strings.Repeat("a", 10)},
		{name: "pgbench's 40 kB error keeps what failed and how it ends", in: long, limit: ConditionMessage,
			head: "ERROR:  invalid input syntax for type integer", tail: "\" at the end"},
		{name: "tiny limit keeps the beginning", in: "abcdefghijklmnopqrstuvwxyz", limit: 5, want: "abcde"},
		{name: "zero limit", in: "abc", limit: 0, want: ""},
		{name: "invalid UTF-8 replaced", in: "a\xffb", limit: 10, want: "a\uFFFDb"},
		{name: "multi-byte runes never split", in: strings.Repeat("é", 3000), limit: EventNote,
			head: "éé", tail: "éé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in, tt.limit)
			if len(got) > tt.limit {
				t.Fatalf("%d bytes, over the limit of %d", len(got), tt.limit)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("not valid UTF-8: %q", got)
			}
			if tt.want != "" || tt.head == "" {
				if got != tt.want {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
				return
			}
			if !strings.HasPrefix(got, tt.head) || !strings.HasSuffix(got, tt.tail) || !strings.Contains(got, "bytes cut") {
				t.Fatalf("got %q…%q, want it to start %q, end %q and say what was cut", got[:40], got[len(got)-40:], tt.head, tt.tail)
			}
		})
	}
}

func FuzzText(f *testing.F) {
	f.Add("pgbench: error: "+strings.Repeat("x", 5000), 1000)
	f.Add("é\xff\x00", 2)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 0 || limit > 1<<16 {
			return
		}
		got := Text(s, limit)
		if len(got) > limit || !utf8.ValidString(got) {
			t.Fatalf("Text(%d bytes, %d) = %d bytes, valid %v", len(s), limit, len(got), utf8.ValidString(got))
		}
		if utf8.ValidString(s) && len(s) <= limit && got != s {
			t.Fatalf("a text that fits was changed")
		}
	})
}
