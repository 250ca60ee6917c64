package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
	"github.com/tunnelbench/tunnelbench/internal/analysis/regress"
	"github.com/tunnelbench/tunnelbench/internal/testing/pgtest"
)

// server is a real PostgreSQL for the store, stopped at the end of the test.
func server(t *testing.T) *pgtest.Server {
	t.Helper()
	pgtest.SkipIfShort(t)
	s, err := pgtest.StartTemp(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func open(t *testing.T, s *pgtest.Server) *Store {
	t.Helper()
	st, err := Open(s.ConnString("require"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// scheduled is a completed benchmark of schedule "nightly", its UID and completion from i.
func scheduled(i int, tps ...[]float64) *benchv1.TunnelBenchmark {
	tb := benchsim.Completed(fmt.Sprintf("nightly-%d", i), tps...)
	tb.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	tb.Status.CompletionTime = &metav1.Time{Time: time.Date(2026, 11, 27, i, 0, 0, 0, time.UTC)}
	return tb
}

func TestMigrateIsVersionedAndRefusesANewerSchema(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.ConnString("require"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	// Two operators at once (a rolling update): the advisory lock applies each version once.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, s.ConnString("require"))
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = c.Close(ctx) }()
			_, errs[i] = Migrate(ctx, c)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var versions int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM tunnelbench_schema`).Scan(&versions); err != nil || versions != len(migrations) {
		t.Fatalf("%d versions recorded (%v), want %d", versions, err, len(migrations))
	}
	if v, err := Migrate(ctx, conn); err != nil || v != len(migrations) {
		t.Fatalf("migrating a current schema: %d, %v", v, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO tunnelbench_schema (version) VALUES ($1)`, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, conn); err == nil || !strings.Contains(err.Error(), "upgrade the operator") {
		t.Fatalf("a newer schema: %v", err)
	}
}

func TestWriteOnceAndReadTheSeries(t *testing.T) {
	s := server(t)
	st := open(t, s)
	ctx := context.Background()
	key := SeriesKey{Namespace: "db", Schedule: "nightly", TemplateHash: "abc"}
	for i := 1; i <= 4; i++ {
		tb := scheduled(i, []float64{1000, 1010, 990}, []float64{800, 790, 810})
		wrote, err := st.Write(ctx, RecordOf(tb, "nightly", "abc"))
		if err != nil || !wrote {
			t.Fatalf("benchmark %d: wrote %v, %v", i, wrote, err)
		}
		// Again, as an operator that restarted before it could say so would.
		if wrote, err := st.Write(ctx, RecordOf(tb, "nightly", "abc")); err != nil || wrote {
			t.Fatalf("benchmark %d again: wrote %v, %v", i, wrote, err)
		}
	}
	other := scheduled(5, []float64{1000}, []float64{800})
	if _, err := st.Write(ctx, RecordOf(other, "nightly", "another-template")); err != nil {
		t.Fatal(err)
	}
	points, err := st.Series(ctx, key, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The newest three benchmarks, oldest first: direct's tps, tls's ratio and tps each.
	if len(points) != 9 || points[0].Benchmark != "nightly-2" || points[8].Benchmark != "nightly-4" {
		t.Fatalf("%d points: %+v", len(points), points)
	}
	var ratio Point
	for _, p := range points {
		if p.Transport == "tls" && p.Figure == string(regress.FigureRatio) {
			ratio = p
		}
	}
	if ratio.Value < 0.79 || ratio.Value > 0.81 || ratio.Low == 0 || ratio.High < ratio.Value {
		t.Errorf("tls's ratio %+v, want about 0.8 with its interval", ratio)
	}
	if err := st.MarkRegressed(ctx, ratio.UID, "tls", regress.FigureRatio); err != nil {
		t.Fatal(err)
	}
	points, _ = st.Series(ctx, key, 3)
	for _, p := range points {
		if want := p.UID == ratio.UID && p.Transport == "tls" && p.Figure == "ratio"; p.Regressed != want {
			t.Errorf("%+v: regressed %v, want %v", p, p.Regressed, want)
		}
	}
	var runs int
	if err := st.pool.QueryRow(ctx, `SELECT count(*) FROM tunnelbench_runs`).Scan(&runs); err != nil || runs != 4*6+2 {
		t.Errorf("%d runs recorded (%v), want %d: every round of every transport, once", runs, err, 4*6+2)
	}
}

// TestTheDatabaseDownThenBack: a write while the database is down fails, saying so, without the
// password; the same write succeeds once it is back, the schema migrated then.
func TestTheDatabaseDownThenBack(t *testing.T) {
	s := server(t)
	s.Down()
	st := open(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rec := RecordOf(scheduled(1, []float64{1000, 1010}, []float64{800, 790}), "nightly", "abc")
	_, err := st.Write(ctx, rec)
	if err == nil || !strings.Contains(err.Error(), "unreachable") || strings.Contains(err.Error(), s.Password) {
		t.Fatalf("a write to a stopped database: %v", err)
	}
	if err := s.Up(); err != nil {
		t.Fatal(err)
	}
	if wrote, err := st.Write(ctx, rec); err != nil || !wrote {
		t.Fatalf("once it is back: wrote %v, %v", wrote, err)
	}
	if ok, err := st.Recorded(ctx, rec.UID); err != nil || !ok {
		t.Fatalf("recorded %v, %v", ok, err)
	}
}

func TestOpenDoesNotQuoteTheConnectionString(t *testing.T) {
	_, err := Open("postgres://app:s3cret-value@[::1")
	if err == nil || strings.Contains(err.Error(), "s3cret-value") {
		t.Fatalf("%v", err)
	}
}

// TestOpenFileWaitsForTheSecret: a store whose connection string is a mounted Secret's file says
// it is not there yet until the kubelet writes the file, then works.
func TestOpenFileWaitsForTheSecret(t *testing.T) {
	s := server(t)
	path := filepath.Join(t.TempDir(), "uri")
	st := OpenFile(path)
	t.Cleanup(st.Close)
	ctx := context.Background()
	if _, err := st.Recorded(ctx, "00000000-0000-0000-0000-000000000001"); err == nil || !strings.Contains(err.Error(), "not there yet") {
		t.Fatalf("before the file: %v", err)
	}
	if err := os.WriteFile(path, []byte(s.ConnString("require")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Recorded(ctx, "00000000-0000-0000-0000-000000000001"); err != nil || ok {
		t.Fatalf("once the file is there: %v, %v", ok, err)
	}
	// A Secret that turns wrong, then is fixed, is followed without a restart: a refused login
	// says so (without the password), the fixed file works at the next call.
	wrong := strings.Replace(s.ConnString("require"), s.Password, "not-the-password", 1)
	if err := os.WriteFile(path, []byte(wrong), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recorded(ctx, "00000000-0000-0000-0000-000000000001"); err == nil || strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("with a wrong password in the file: %v", err)
	}
	if err := os.WriteFile(path, []byte(s.ConnString("require")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recorded(ctx, "00000000-0000-0000-0000-000000000001"); err != nil {
		t.Fatalf("once the file is fixed: %v", err)
	}
}

// TestPrune: the store keeps what the retention says, by age and by count per series, each
// series on its own, and a benchmark's figures and runs go with it.
func TestPrune(t *testing.T) {
	s := server(t)
	st := open(t, s)
	ctx := context.Background()
	// nightly-1 … nightly-6 completed at 01:00 … 06:00; one of another template at 05:00.
	for i := 1; i <= 6; i++ {
		if _, err := st.Write(ctx, RecordOf(scheduled(i, []float64{1000}, []float64{800}), "nightly", "abc")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Write(ctx, RecordOf(scheduled(7, []float64{1000}, []float64{800}), "nightly", "another")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	names := func() []string {
		t.Helper()
		rows, err := st.pool.Query(ctx, `SELECT name FROM tunnelbench_benchmarks ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name      string
		retention Retention
		deleted   int64
		kept      string
	}{
		{"nothing bounded", Retention{}, 0, "nightly-1 nightly-2 nightly-3 nightly-4 nightly-5 nightly-6 nightly-7"},
		// 07:00 is one hour before now: kept; 01:00 and 02:00 are beyond 5 h 30 min.
		{"by age", Retention{MaxAge: 5*time.Hour + 30*time.Minute}, 2, "nightly-3 nightly-4 nightly-5 nightly-6 nightly-7"},
		// The newest two of "abc", and the only one of "another".
		{"by count, per series", Retention{MaxPerSeries: 2}, 2, "nightly-5 nightly-6 nightly-7"},
		{"again: nothing more", Retention{MaxAge: 5*time.Hour + 30*time.Minute, MaxPerSeries: 2}, 0, "nightly-5 nightly-6 nightly-7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			deleted, err := st.Prune(ctx, tc.retention, now)
			if err != nil || deleted != tc.deleted || strings.Join(names(), " ") != tc.kept {
				t.Fatalf("deleted %d (%v), kept %v; want %d, %s", deleted, err, names(), tc.deleted, tc.kept)
			}
		})
	}
	var orphans int
	if err := st.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tunnelbench_figures f WHERE NOT EXISTS
		(SELECT 1 FROM tunnelbench_benchmarks b WHERE b.uid = f.benchmark_uid)) + (SELECT count(*) FROM tunnelbench_runs r
		WHERE NOT EXISTS (SELECT 1 FROM tunnelbench_benchmarks b WHERE b.uid = r.benchmark_uid))`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d figures or runs of deleted benchmarks left (%v)", orphans, err)
	}
}

// TestPrunerPrunesAtStart: the operator's pruner applies its retention as soon as it starts, and
// stops with its context.
func TestPrunerPrunesAtStart(t *testing.T) {
	s := server(t)
	st := open(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	for i := 1; i <= 3; i++ {
		if _, err := st.Write(ctx, RecordOf(scheduled(i, []float64{1000}, []float64{800}), "nightly", "abc")); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		// Every benchmark of scheduled() completed in 2026: a day's age keeps none of them.
		done <- (&Pruner{Store: st, Retention: Retention{MaxAge: 24 * time.Hour}, Interval: time.Hour}).Start(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := st.pool.QueryRow(ctx, `SELECT count(*) FROM tunnelbench_benchmarks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d benchmarks left", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
}
