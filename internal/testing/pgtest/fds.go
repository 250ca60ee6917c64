package pgtest

import (
	"os"
	"strconv"
	"syscall"
)

// A Go fuzz worker talks to its coordinator over file descriptors 3 and 4, which it inherits
// without close-on-exec; a server or pgbench it starts would inherit them too, and a server left
// behind by a worker the coordinator stopped keeps the coordinator waiting for their end forever
// (`make test` hung in FuzzShellSpellings). Every descriptor this process inherited above stderr is
// marked close-on-exec before any test starts a program: the process itself keeps using them.
func init() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
