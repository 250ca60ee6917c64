package redact

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	r := New("s3cr\"et'pw", "", "hunter2")
	tests := []struct{ in, want string }{
		{"password authentication failed", "password authentication failed"},
		{`ERROR:  invalid input syntax for type integer: "s3cr"et'pw"`, `ERROR:  invalid input syntax for type integer: "[redacted]"`},
		{`{"message":"value s3cr\"et'pw"}`, `{"message":"value [redacted]"}`},
		{`select 's3cr"et''pw'`, `select '[redacted]'`},
		{"hunter2hunter2", "[redacted][redacted]"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var zero *Redactor
	if zero.String("x") != "x" || !New("").Empty() {
		t.Error("an empty redactor changed a text")
	}
}

func TestKeyMaterial(t *testing.T) {
	body1 := strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 2)
	body2 := "BKcwggSjAgEAAoIBAQC7"
	key := "-----BEGIN PRIVATE KEY-----\n" + body1 + "\n" + body2 + "\n-----END PRIVATE KEY-----\n"
	path := filepath.Join(t.TempDir(), "tls.key")
	if err := os.WriteFile(path, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	r := New(KeyMaterial(path)...)
	for _, leak := range []string{key, "ssh: " + body1 + " …", body2} {
		if got := r.String(leak); strings.Contains(got, body1) || strings.Contains(got, body2) {
			t.Errorf("key material left in %q", got)
		}
	}
	if got := r.String("-----BEGIN PRIVATE KEY-----"); got != "-----BEGIN PRIVATE KEY-----" {
		t.Errorf("a PEM header is no secret: %q", got)
	}
	if KeyMaterial(filepath.Join(t.TempDir(), "none")) != nil {
		t.Error("a missing file has key material")
	}
}

// TestWriterMasksAcrossWrites: a secret split across two writes (pgbench writes as it goes) is still
// masked, since whole lines are redacted.
func TestWriterMasksAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := New("hunter2").Writer(&out)
	for _, chunk := range []string{"NOTICE:  the password is hun", "ter2\nprogress: 1.0 s", ", 10 tps\nlast hunter", "2"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "NOTICE:  the password is [redacted]\nprogress: 1.0 s, 10 tps\nlast [redacted]"
	if out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}
