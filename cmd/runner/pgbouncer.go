package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
)

func init() {
	register(command{name: "pgbouncer", run: func(args []string, _ io.Reader, _, stderr io.Writer) int {
		return execPgBouncer(args, stderr)
	}})
}

// execPgBouncer writes PgBouncer's configuration from flags and the environment, then replaces
// this process with PgBouncer, which so receives the pod's signals directly. The password reaches
// only the auth file (0600, in the pod's memory-backed /tmp); PgBouncer's environment and command
// line do not carry it.
func execPgBouncer(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("pgbouncer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := pgbouncer.BindFlags(fs)
	dir := fs.String("dir", "/tmp/pgbouncer", "folder for pgbouncer.ini and the auth file")
	binary := fs.String("pgbouncer", "", "PgBouncer executable (default: pgbouncer on PATH, else /usr/sbin/pgbouncer)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	user, password := os.Getenv("PGUSER"), os.Getenv("PGPASSWORD")
	if user == "" || password == "" {
		fmt.Fprintln(stderr, "tunnelbench-runner pgbouncer: PGUSER and PGPASSWORD must be set (from the credentials Secret)")
		return 2
	}
	cfg, err := flags.Config(user)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner pgbouncer: %v\n", err)
		return 2
	}
	ini, err := pgbouncer.Write(*dir, cfg, password)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner pgbouncer: %v\n", err)
		return 1
	}
	bin := *binary
	if bin == "" {
		if bin, err = exec.LookPath("pgbouncer"); err != nil {
			bin = "/usr/sbin/pgbouncer"
		}
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PGPASSWORD=") {
			env = append(env, e)
		}
	}
	err = syscall.Exec(bin, []string{"pgbouncer", ini}, env)
	fmt.Fprintf(stderr, "tunnelbench-runner pgbouncer: cannot start %s: %v\n", bin, err)
	return 1
}
