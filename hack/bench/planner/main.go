// Command planner simulates the planner's run-length advice with the project's own code: pilots
// of 3 (and 6) rounds of 10 s runs are drawn from a model where each run's log-tps carries a
// drift that no length removes and a within-run noise from 1-second progress reports (an AR(1)
// series, its mean's error read by steady.MeanError as the operator reads it); each pilot goes
// through precision.Pilot, Pool and BestLength as `kubectl tunnelbench plan` does; the advised
// length and the manifest's 10 s are then costed on the true model (precision.Plan: the mean
// time over the share of benchmarks that met the goal, what an answer costs). It prints, per
// model, how often the advice changes the length, an answer's true cost at 10 s, at the true best
// length and following the advice, and how often following it cost more than a tenth more.
//
//	go run ./hack/bench/planner [-pilots 30]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
	"github.com/tunnelbench/tunnelbench/internal/analysis/precision"
	"github.com/tunnelbench/tunnelbench/internal/analysis/steady"
)

// model is the truth a pilot is drawn from: the path's ratio, each run's drift (a log standard
// deviation whatever its length) and the error of a 10 s run's mean from its own reports.
type model struct {
	name           string
	ratio          float64
	drift, within  float64
	reportsLag1    float64
	overheadSecond float64
}

const (
	current = 10.0 // the manifest's run length, s
	bound   = 30   // its rounds at most
)

var target = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth, HalfWidthPercent: ptr.To[int32](3)}

func main() {
	pilots := flag.Int("pilots", 30, "pilots drawn per model and pilot size")
	flag.Parse()
	models := []model{
		{"noise within the runs", 0.95, 0.01, 0.04, 0.3, 10},
		{"half and half", 0.95, 0.028, 0.028, 0.3, 10},
		{"drift between rounds", 0.95, 0.04, 0.01, 0.3, 10},
	}
	fmt.Printf("a ±3 %% target within %d rounds, runs of %.0f s and 10 s besides each; %d pilots a row\n", bound, current, *pilots)
	fmt.Println("| model | pilot rounds | advised a change | advised lengths (s: pilots) | an answer's true cost at 10 s | " +
		"at the true best length | following the advice (mean) | advice cost > 10 % more |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range models {
		for _, rounds := range []int{3, 6} {
			if err := row(rng, m, rounds, *pilots); err != nil {
				fmt.Fprintln(os.Stderr, "planner:", err)
				os.Exit(1)
			}
		}
	}
}

// truth is the model's path at runs of seconds: two runs a pair, each with its drift and its
// own noise.
func (m model) truth(seconds float64) []precision.Path {
	within := m.within * m.within * current / seconds
	return []precision.Path{{Transport: "tls", LogMean: math.Log(m.ratio),
		LogSD: math.Sqrt(2*m.drift*m.drift + 2*within), Within: 2 * within, Seconds: seconds}}
}

// trueCost is what an answer costs on the true model at runs of seconds: the simulated
// benchmarks' mean time over the share that met the goal (precision.Length.PerAnswer).
func (m model) trueCost(seconds float64) time.Duration {
	pl := precision.Plan(target, bound, m.truth(seconds), 7)
	round := 2 * time.Duration((m.overheadSecond+seconds)*float64(time.Second))
	if pl.Met == 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(pl.MeanRounds / pl.Met * float64(round))
}

// trueBest is the length whose answer costs least on the true model.
func (m model) trueBest() (float64, time.Duration) {
	best, cost := current, time.Duration(math.MaxInt64)
	for _, s := range append([]float64{current}, precision.Lengths...) {
		if c := m.trueCost(s); c < cost {
			best, cost = s, c
		}
	}
	return best, cost
}

// run is one run of a pilot: its mean tps over 1-second reports and their error as the operator
// records it.
func (m model) run(rng *rand.Rand, level float64) (tps, errorPercent float64) {
	n := int(current)
	rho := m.reportsLag1
	// The reports' spread that gives the mean of n of them an error of m.within.
	sigma := m.within * math.Sqrt(float64(n)*(1-rho)/(1+rho))
	reports := make([]float64, n)
	e := rng.NormFloat64() * sigma
	drift := rng.NormFloat64() * m.drift
	for i := range reports {
		reports[i] = level * math.Exp(drift+e)
		e = rho*e + math.Sqrt(1-rho*rho)*sigma*rng.NormFloat64()
	}
	var sum float64
	for _, r := range reports {
		sum += r
	}
	se, _ := steady.MeanError(reports)
	return sum / float64(n), 100 * se
}

// pilot is a completed benchmark of direct and tls over rounds, its runs timed and carrying their
// own error.
func (m model) pilot(rng *rand.Rand, rounds int) *benchv1.TunnelBenchmark {
	var direct, tls, directErr, tlsErr []float64
	for range rounds {
		level := 1000 * math.Exp(0.03*rng.NormFloat64())
		t, e := m.run(rng, level)
		direct, directErr = append(direct, t), append(directErr, e)
		t, e = m.run(rng, level*m.ratio)
		tls, tlsErr = append(tls, t), append(tlsErr, e)
	}
	tb := benchsim.Completed("pilot", direct, tls)
	tb.Spec.Load.Duration = &metav1.Duration{Duration: time.Duration(current * float64(time.Second))}
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	for r := range rounds {
		for i, errs := range [][]float64{directErr, tlsErr} {
			run := &tb.Status.Results[i].Runs[r]
			run.Steadiness = &benchv1.Steadiness{Steady: true, MeanErrorPercent: ptr.To(errs[r])}
			end := start.Add(tb.Spec.Load.Duration.Duration)
			run.StartTime, run.EndTime = ptr.To(metav1.NewTime(start)), ptr.To(metav1.NewTime(end))
			start = end.Add(time.Duration(m.overheadSecond * float64(time.Second)))
		}
	}
	return tb
}

func row(rng *rand.Rand, m model, rounds, pilots int) error {
	atCost := m.trueCost(current)
	bestLength, bestCost := m.trueBest()
	changed, costlier := 0, 0
	var followed time.Duration
	lengths := map[float64]int{}
	for range pilots {
		pilot := m.pilot(rng, rounds)
		paths := precision.Pool([][]precision.Path{precision.Pilot(pilot)}, current)
		overhead, ok := precision.RunOverhead(pilot)
		if !ok || len(paths) != 1 {
			return fmt.Errorf("%s: a pilot without paths or times", m.name)
		}
		_, best := precision.BestLength(target, bound, paths, 2, overhead, current)
		lengths[best.Seconds]++
		cost := m.trueCost(best.Seconds)
		followed += cost / time.Duration(pilots)
		if best.Seconds != current {
			changed++
		}
		if cost > atCost*11/10 {
			costlier++
		}
	}
	spread := ""
	for _, s := range append([]float64{current}, precision.Lengths...) {
		if n := lengths[s]; n > 0 {
			spread += fmt.Sprintf("%.0f:%d ", s, n)
			lengths[s] = 0
		}
	}
	fmt.Printf("| %s (drift %.0f %%, a 10 s run's own %.0f %%) | %d | %d of %d | %s| %s | %s at %.0f s | %s | %d |\n",
		m.name, 100*m.drift, 100*m.within, rounds, changed, pilots, spread, atCost.Round(time.Second),
		bestCost.Round(time.Second), bestLength, followed.Round(time.Second), costlier)
	return nil
}
