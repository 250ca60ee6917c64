/* pause is the sandbox process of every pod: it holds the pod's namespaces and reaps orphans.
 * Built statically by hack/images.sh, since no registry can serve registry.k8s.io/pause. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }

int main(void) {
	struct sigaction term = {.sa_handler = stop}, child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
	sigaction(SIGINT, &term, NULL);
	sigaction(SIGTERM, &term, NULL);
	sigaction(SIGCHLD, &child, NULL);
	for (;;) pause();
}
