package cronplan

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec, tz, want string
	}{
		{"*/5 * * * *", "", ""},
		{"@hourly", "Europe/Paris", ""},
		{"0 9 * * 1-5", "America/New_York", ""},
		{"CRON_TZ=UTC 0 * * * *", "", "set the time zone in timeZone"},
		{"0 * * *", "", "is not a cron schedule"},
		{"61 * * * *", "", "is not a cron schedule"},
		{"0 * * * *", "Mars/Olympus", "is not a time zone"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.spec, tc.tz)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q, %q) = %v, want %q", tc.spec, tc.tz, err, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	everyMinute, _ := Parse("* * * * *", "")
	paris9, _ := Parse("0 9 * * *", "Europe/Paris")
	tests := []struct {
		name    string
		s       Schedule
		o       Observed
		due     string
		start   bool
		cancel  []string
		skipped int
		why     string
		next    string
	}{
		{"nothing due yet", everyMinute,
			Observed{Now: at("2026-11-27T10:00:30Z"), Since: at("2026-11-27T10:00:10Z"), StartingDeadline: time.Minute},
			"", false, nil, 0, "", "2026-11-27T10:01:00Z"},
		{"a run due starts", everyMinute,
			Observed{Now: at("2026-11-27T10:01:02Z"), Since: at("2026-11-27T10:00:10Z"), StartingDeadline: time.Minute},
			"2026-11-27T10:01:00Z", true, nil, 0, "", "2026-11-27T10:02:00Z"},
		{"only the latest of missed runs starts", everyMinute,
			Observed{Now: at("2026-11-27T10:05:02Z"), Since: at("2026-11-27T10:00:00Z"), StartingDeadline: time.Minute},
			"2026-11-27T10:05:00Z", true, nil, 4, "4 earlier run(s) were missed", "2026-11-27T10:06:00Z"},
		{"too late for the deadline", everyMinute,
			Observed{Now: at("2026-11-27T10:01:50Z"), Since: at("2026-11-27T10:00:00Z"), StartingDeadline: 30 * time.Second},
			"2026-11-27T10:01:00Z", false, nil, 1, "missed by more than the starting deadline (30s)", "2026-11-27T10:02:00Z"},
		{"suspended", everyMinute,
			Observed{Now: at("2026-11-27T10:01:02Z"), Since: at("2026-11-27T10:00:00Z"), Suspended: true, StartingDeadline: time.Minute},
			"2026-11-27T10:01:00Z", false, nil, 1, "suspended", "2026-11-27T10:02:00Z"},
		{"forbid skips while one runs", everyMinute,
			Observed{Now: at("2026-11-27T10:01:02Z"), Since: at("2026-11-27T10:00:00Z"), Policy: Forbid, Active: []string{"a"},
				StartingDeadline: time.Minute},
			"2026-11-27T10:01:00Z", false, nil, 1, "a still runs (concurrencyPolicy Forbid)", "2026-11-27T10:02:00Z"},
		{"replace cancels the running one", everyMinute,
			Observed{Now: at("2026-11-27T10:01:02Z"), Since: at("2026-11-27T10:00:00Z"), Policy: Replace, Active: []string{"a"},
				StartingDeadline: time.Minute},
			"2026-11-27T10:01:00Z", true, []string{"a"}, 0, "", "2026-11-27T10:02:00Z"},
		{"allow starts beside it", everyMinute,
			Observed{Now: at("2026-11-27T10:01:02Z"), Since: at("2026-11-27T10:00:00Z"), Policy: Allow, Active: []string{"a"},
				StartingDeadline: time.Minute},
			"2026-11-27T10:01:00Z", true, nil, 0, "", "2026-11-27T10:02:00Z"},
		{"a run whose benchmark exists is neither started again nor skipped", everyMinute,
			Observed{Now: at("2026-11-27T10:01:02Z"), Since: at("2026-11-27T10:00:00Z"), Policy: Forbid, Active: []string{"a"},
				StartingDeadline: time.Minute, Started: func(due time.Time) bool { return due.Equal(at("2026-11-27T10:01:00Z")) }},
			"2026-11-27T10:01:00Z", false, nil, 0, "", "2026-11-27T10:02:00Z"},
		{"an earlier run that has its benchmark is not missed", everyMinute,
			Observed{Now: at("2026-11-27T10:02:02Z"), Since: at("2026-11-27T10:00:00Z"), Policy: Forbid, Active: []string{"a"},
				StartingDeadline: time.Minute, Started: func(due time.Time) bool { return due.Equal(at("2026-11-27T10:01:00Z")) }},
			"2026-11-27T10:02:00Z", false, nil, 1, "a still runs", "2026-11-27T10:03:00Z"},
		// 09:00 in Paris is 08:00 UTC in winter.
		{"in its time zone", paris9,
			Observed{Now: at("2026-11-27T08:00:05Z"), Since: at("2026-11-26T08:00:00Z"), StartingDeadline: time.Minute},
			"2026-11-27T08:00:00Z", true, nil, 0, "", "2026-11-28T08:00:00Z"},
		{"a year down catches up in steps", everyMinute,
			Observed{Now: at("2026-11-27T10:00:30Z"), Since: at("2025-11-27T10:00:00Z"), StartingDeadline: time.Minute},
			"2025-12-04T08:40:00Z", false, nil, maxMissed, "missed by more than the starting deadline", "2026-11-27T10:01:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.s, tc.o)
			due := ""
			if !d.Due.IsZero() {
				due = d.Due.UTC().Format(time.RFC3339)
			}
			if due != tc.due || d.Start != tc.start || !slices.Equal(d.Cancel, tc.cancel) || d.Skipped != tc.skipped ||
				!strings.Contains(d.Why, tc.why) || !d.Next.Equal(at(tc.next)) {
				t.Errorf("got %+v (due %s)", d, due)
			}
		})
	}
}

func TestPrune(t *testing.T) {
	h := func(i int) time.Time { return at("2026-11-27T10:00:00Z").Add(time.Duration(i) * time.Hour) }
	done := []Finished{{"s-1", true, h(1)}, {"s-2", false, h(2)}, {"s-3", true, h(3)}, {"s-4", true, h(4)},
		{"s-5", false, h(5)}, {"s-6", true, h(6)}}
	tests := []struct {
		ok, failed int
		want       []string
	}{
		{3, 1, []string{"s-1", "s-2"}},
		{0, 0, []string{"s-1", "s-2", "s-3", "s-4", "s-5", "s-6"}},
		{10, 10, nil},
	}
	for _, tc := range tests {
		if got := Prune(done, tc.ok, tc.failed); !slices.Equal(got, tc.want) {
			t.Errorf("Prune(%d, %d) = %v, want %v", tc.ok, tc.failed, got, tc.want)
		}
	}
}

func TestBenchmarkName(t *testing.T) {
	if got := BenchmarkName("nightly", at("2026-11-27T10:01:00Z")); got != "nightly-29929561" {
		t.Errorf("got %s", got)
	}
}
