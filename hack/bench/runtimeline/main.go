// Command runtimeline prints where a finished benchmark's seconds went, run by run: when each
// run's Job was created, its runner container started, its measured window began and ended
// (status), the runner exited, and the Job controller marked the Job complete; and, per run, the
// seconds before the measured window (pod start, the runner's preflight, the warm-up), after it
// until the next run's Job (the runner's report, the kubelet's and the Job controller's
// bookkeeping, the operator recording the run) and from the runner's exit to the next run's Job.
// It reads the cluster with kubectl, as a user would; the Jobs and pods must still exist (the
// benchmark's jobsTTL not yet passed).
//
//	go run ./hack/bench/runtimeline -n NAMESPACE BENCHMARK
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

func main() {
	ns := flag.String("n", "default", "the benchmark's namespace")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: runtimeline -n NAMESPACE BENCHMARK")
		os.Exit(2)
	}
	if err := run(*ns, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "runtimeline:", err)
		os.Exit(1)
	}
}

// timeline is one run's moments; a zero time was not seen.
type timeline struct {
	name                                                      string
	created, runnerStarted, start, end, runnerEnded, complete time.Time
}

func run(ns, name string) error {
	tb := &benchv1.TunnelBenchmark{}
	jobs := &batchv1.JobList{}
	pods := &corev1.PodList{}
	selector := benchv1.LabelBenchmark + "=" + name
	for _, get := range []struct {
		into any
		args []string
	}{{tb, []string{"get", "tunnelbenchmark", name}}, {jobs, []string{"get", "jobs", "-l", selector}},
		{pods, []string{"get", "pods", "-l", selector}}} {
		if err := kubectl(get.into, ns, get.args...); err != nil {
			return err
		}
	}
	jobByName := map[string]batchv1.Job{}
	for _, j := range jobs.Items {
		jobByName[j.Name] = j
	}
	runnerOf := map[string]*corev1.ContainerStateTerminated{}
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == runspec.RunnerContainerName && c.State.Terminated != nil {
				runnerOf[p.Labels[batchv1.JobNameLabel]] = c.State.Terminated
			}
		}
	}
	var runs []timeline
	for _, r := range tb.Status.Results {
		for _, m := range r.Runs {
			t := timeline{name: fmt.Sprintf("%s r%d", r.Transport, m.Round)}
			if m.StartTime != nil && m.EndTime != nil {
				t.start, t.end = m.StartTime.Time, m.EndTime.Time
			}
			if j, ok := jobByName[m.Job]; ok {
				t.created = j.CreationTimestamp.Time
				if j.Status.CompletionTime != nil {
					t.complete = j.Status.CompletionTime.Time
				}
			}
			if term := runnerOf[m.Job]; term != nil {
				t.runnerStarted, t.runnerEnded = term.StartedAt.Time, term.FinishedAt.Time
			}
			runs = append(runs, t)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("benchmark %s/%s has no runs in its status", ns, name)
	}
	slices.SortFunc(runs, func(a, b timeline) int { return cmp.Compare(a.created.UnixNano(), b.created.UnixNano()) })
	printTimeline(runs)
	return nil
}

func printTimeline(runs []timeline) {
	t0 := runs[0].created
	at := func(t time.Time) string {
		if t.IsZero() || t0.IsZero() {
			return "     -"
		}
		return fmt.Sprintf("%6.0f", t.Sub(t0).Seconds())
	}
	span := func(from, to time.Time) string {
		if from.IsZero() || to.IsZero() {
			return "     -"
		}
		return fmt.Sprintf("%6.0f", to.Sub(from).Seconds())
	}
	fmt.Println("seconds from the first Job's creation (the API's timestamps are whole seconds); after: from the window's end " +
		"to the next run's Job (the last run: to its Job's Complete); next: from the runner's exit to the next run's Job")
	fmt.Printf("%-22s %6s %6s %6s %6s %6s %6s | %6s %6s %6s\n", "run", "job", "runner", "start", "end", "exit", "done",
		"before", "after", "next")
	var before, after, next, measured time.Duration
	timed, followed := 0, 0
	for i, r := range runs {
		// What ends a run for the benchmark: the next run's Job, made once the operator recorded
		// this one; the last run's end is its Job's Complete.
		ends, following := r.complete, time.Time{}
		if i+1 < len(runs) {
			ends, following = runs[i+1].created, runs[i+1].created
		}
		fmt.Printf("%-22s %s %s %s %s %s %s | %s %s %s\n", r.name, at(r.created), at(r.runnerStarted), at(r.start),
			at(r.end), at(r.runnerEnded), at(r.complete), span(r.created, r.start), span(r.end, ends), span(r.runnerEnded, following))
		if !r.start.IsZero() && !r.created.IsZero() && !ends.IsZero() {
			before += r.start.Sub(r.created)
			after += ends.Sub(r.end)
			measured += r.end.Sub(r.start)
			timed++
		}
		if !following.IsZero() && !r.runnerEnded.IsZero() {
			next += following.Sub(r.runnerEnded)
			followed++
		}
	}
	fmt.Printf("\n%d runs: measured %.0f s; per run %.1f s before the measured window, %.1f s after it; the next run's Job "+
		"%.1f s after a runner's exit\n", len(runs), measured.Seconds(), before.Seconds()/float64(max(timed, 1)),
		after.Seconds()/float64(max(timed, 1)), next.Seconds()/float64(max(followed, 1)))
}

func kubectl(into any, ns string, args ...string) error {
	out, err := exec.Command("kubectl", append(append([]string{"-n", ns}, args...), "-o", "json")...).Output()
	if err != nil {
		return fmt.Errorf("kubectl %v: %w", args, err)
	}
	return json.Unmarshal(out, into)
}
