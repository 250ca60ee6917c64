package engine

import "testing"

func TestCommandLine(t *testing.T) {
	got := CommandLine("pgbench", []string{"-f", "/tmp/a b.sql", "-c", "4", "it's"})
	want := `pgbench -f '/tmp/a b.sql' -c 4 'it'\''s'`
	if got != want {
		t.Errorf("CommandLine = %s, want %s", got, want)
	}
}
