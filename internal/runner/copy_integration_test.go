package runner

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// TestCopyLoad creates both copy data sets on a real PostgreSQL, copies them through the runner
// and checks what a compressing path would make of them: the text shrinks many times in zlib
// (ssh's compression), the random data does not.
func TestCopyLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	s := startServer(t, pgtest.Options{})
	setEnv(t, s.Env("disable"))
	for _, tt := range []struct {
		data          string
		minCompressed float64 // the least zlib must shrink the stream by
		maxCompressed float64
	}{
		{runspec.CopyText, 10, 1e9},
		{runspec.CopyRandom, 0, 1.05},
	} {
		t.Run(tt.data, func(t *testing.T) {
			c := runspec.Copy{Bytes: 2 << 20, Data: tt.data}
			for i, want := range []string{"created true", "created false"} {
				_, out, err := runOnce(t, Options{Run: runspec.Run{Init: true, Tunnels: 1, Copy: c}})
				if err != nil || !bytes.Contains([]byte(out), []byte(want)) {
					t.Fatalf("initialization %d: %v, want %q in:\n%s", i+1, err, want, out)
				}
			}
			rep, out, err := runOnce(t, Options{Run: runspec.Run{Tunnels: 1, Copy: c}})
			if err != nil {
				t.Fatalf("copy: %v\n%s", err, out)
			}
			got := rep.Copy
			if got == nil || got.Rows != c.Rows() || got.Bytes < c.Bytes || got.Bytes > c.Bytes*11/10 || got.MBPerSecond <= 0 ||
				got.RowsPerSecond <= 0 || rep.Result != nil {
				t.Fatalf("copy report %+v (result %+v) for %+v", got, rep.Result, c)
			}

			// What ssh's zlib would make of the stream.
			stream := copyStream(t, c)
			var z bytes.Buffer
			zw, _ := zlib.NewWriterLevel(&z, 6)
			_, _ = zw.Write(stream)
			_ = zw.Close()
			ratio := float64(len(stream)) / float64(z.Len())
			t.Logf("%s: %d bytes, %.2f MB/s on loopback, zlib ratio %.2f", tt.data, got.Bytes, got.MBPerSecond, ratio)
			if ratio < tt.minCompressed || ratio > tt.maxCompressed {
				t.Errorf("%s data compresses %.2f×, want %.2f–%.2f", tt.data, ratio, tt.minCompressed, tt.maxCompressed)
			}
		})
	}
}

// copyStream is the data set as COPY sends it, over libpq's environment.
func copyStream(t *testing.T, c runspec.Copy) []byte {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var b bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &b, fmt.Sprintf("COPY %s TO STDOUT (FORMAT binary)", c.Table())); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
