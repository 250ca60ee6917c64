package precision

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/benchsim"
)

func TestPilotComponents(t *testing.T) {
	tb := benchsim.Completed("pilot", []float64{1000, 1100, 900}, []float64{700, 790, 620})
	benchsim.Timed(tb, 2, 8*time.Second)
	paths := Pilot(tb)
	if len(paths) != 1 {
		t.Fatalf("paths %+v", paths)
	}
	// Two runs of 2 % each: 2·0.02² on a pair's log-ratio, at the pilot's 10 s.
	if p := paths[0]; math.Abs(p.Within-0.0008) > 1e-12 || p.Seconds != 10 {
		t.Errorf("within %v at %v s, want 0.0008 at 10", p.Within, p.Seconds)
	}
	if overhead, ok := RunOverhead(tb); !ok || overhead != 8*time.Second {
		t.Errorf("overhead %v %v, want 8s", overhead, ok)
	}
	// A run without its own error leaves the path without a split: nothing is guessed.
	tb.Status.Results[1].Runs[2].Steadiness = nil
	if p := Pilot(tb)[0]; p.Within != 0 || p.Seconds != 0 {
		t.Errorf("one run without its error: %+v", p)
	}
	if _, ok := RunOverhead(benchsim.Completed("untimed", []float64{1, 2}, []float64{1, 2})); ok {
		t.Error("untimed runs gave an overhead")
	}
}

func TestPathAt(t *testing.T) {
	// Variance 0.0025: 0.0016 within the runs at 10 s, 0.0009 drift.
	p := Path{Transport: "tls", LogSD: 0.05, Within: 0.0016, Seconds: 10, Pairs: 3}
	for _, tt := range []struct {
		seconds, sd float64
	}{
		{10, 0.05},
		{40, math.Sqrt(0.0009 + 0.0004)},
		{2.5, math.Sqrt(0.0009 + 0.0064)},
	} {
		if got := p.At(tt.seconds); math.Abs(got.LogSD-tt.sd) > 1e-12 || got.between() < 0.0009-1e-12 || got.between() > 0.0009+1e-12 {
			t.Errorf("at %v s: %+v, want a spread of %v", tt.seconds, got, tt.sd)
		}
	}
	if got := (Path{LogSD: 0.05}).At(40); got.LogSD != 0.05 {
		t.Errorf("a path without its runs' error was rescaled: %+v", got)
	}
	if s := p.WithinShare(); math.Abs(s-0.64) > 1e-12 {
		t.Errorf("within share %v", s)
	}
	for _, tt := range []struct {
		path Path
		says string
	}{
		{p, "64 % of it within the runs (at 10s a run), 36 % drift between rounds"},
		{Path{LogSD: 0.05, Within: 0.01, Seconds: 10, Pairs: 3}, "its runs' own noise (10.0 % a pair at 10s a run) is all of it and more: " +
			"no drift between rounds can be told from 3 rounds"},
		{Path{LogSD: 0.05}, "no error of their own"},
	} {
		if got := tt.path.Components(); !strings.Contains(got, tt.says) {
			t.Errorf("%+v: %q, want %q", tt.path, got, tt.says)
		}
	}
}

func TestPool(t *testing.T) {
	a := []Path{{Transport: "tls", LogMean: math.Log(0.7), LogSD: 0.05, Pairs: 3, DF: 2, Within: 0.0016, Seconds: 10}}
	b := []Path{{Transport: "tls", LogMean: math.Log(0.8), LogSD: math.Sqrt(0.0009 + 0.0008), Pairs: 5, DF: 4, Within: 0.0008, Seconds: 20},
		{Transport: "ssh", LogMean: math.Log(0.5), LogSD: 0.1, Pairs: 3, DF: 2}}
	pooled := Pool([][]Path{a, b}, 10)
	if len(pooled) != 2 || pooled[0].Transport != "tls" || pooled[1].Transport != "ssh" {
		t.Fatalf("pooled %+v", pooled)
	}
	tls := pooled[0]
	// Means weighted by rounds; both pilots' drift 0.0009; 0.016 per second of load in both, at 10 s.
	if want := (3*math.Log(0.7) + 5*math.Log(0.8)) / 8; math.Abs(tls.LogMean-want) > 1e-12 || tls.Pairs != 8 || tls.DF != 6 {
		t.Errorf("tls mean %v over %d, want %v over 8", tls.LogMean, tls.Pairs, want)
	}
	if math.Abs(tls.Within-0.0016) > 1e-12 || math.Abs(tls.LogSD-0.05) > 1e-12 || tls.Seconds != 10 {
		t.Errorf("tls %+v: want within 0.0016 and a spread of 0.05 at 10 s", tls)
	}
	if ssh := pooled[1]; ssh.Within != 0 || math.Abs(ssh.LogSD-0.1) > 1e-12 {
		t.Errorf("ssh %+v", ssh)
	}
}

// TestBestLength: where the runs' own noise dominates, longer runs settle a close comparison in
// less time; where drift between rounds dominates, more and shorter rounds do; without the split
// the manifest's length stays.
func TestBestLength(t *testing.T) {
	width := &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth, HalfWidthPercent: ptr.To[int32](3)}
	noisyRuns := []Path{{Transport: "tls", LogMean: math.Log(0.95), LogSD: 0.06, Within: 0.0035, Seconds: 5}}
	at, best := BestLength(width, 40, noisyRuns, 2, 10*time.Second, 5)
	if at.Seconds != 5 || best.Seconds <= 5 || best.Time >= at.Time || best.Planned.Met < at.Planned.Met-0.05 {
		t.Errorf("noise within the runs: at %+v, best %+v: want longer runs in less time", at, best)
	}
	// Within a bound of 20 rounds, 5 s runs rarely get there: a length that does is better,
	// whatever its time.
	at, best = BestLength(width, 20, noisyRuns, 2, 10*time.Second, 5)
	if at.Planned.Met > 0.5 || best.Planned.Met < 0.9 {
		t.Errorf("a bound 10 s runs rarely meet: at %+v, best %+v", at, best)
	}
	drifting := []Path{{Transport: "tls", LogMean: math.Log(0.95), LogSD: 0.06, Within: 0.0001, Seconds: 10}}
	at, best = BestLength(width, 40, drifting, 2, 10*time.Second, 30)
	if best.Seconds >= 30 || best.Time >= at.Time {
		t.Errorf("drift between rounds: at %+v, best %+v: want shorter runs in less time", at, best)
	}
	unsplit := []Path{{Transport: "tls", LogMean: math.Log(0.95), LogSD: 0.06}}
	if at, best = BestLength(width, 20, unsplit, 2, 10*time.Second, 30); best != at {
		t.Errorf("no split: at %+v, best %+v", at, best)
	}
}

// TestDrawn: a path from a pilot is redrawn as its rounds allow: its variance's mean is the
// scaled inverse χ²'s, s²·DF/(DF − 2), never below the runs' own noise; its mean moves by its
// standard error; a path without DF stays as it is.
func TestDrawn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := Path{Transport: "tls", LogMean: math.Log(0.9), LogSD: 0.05, Within: 0.001, Pairs: 11, DF: 10}
	const n = 20000
	var variance, mean, meanSq float64
	for range n {
		q := p.drawn(rng)
		if q.LogSD*q.LogSD < p.Within-1e-15 {
			t.Fatalf("drawn below the runs' own noise: %+v", q)
		}
		variance += q.LogSD * q.LogSD / n
		mean += q.LogMean / n
		meanSq += q.LogMean * q.LogMean / n
	}
	if want := 0.0025 * 10 / 8; math.Abs(variance-want) > 0.03*want {
		t.Errorf("mean variance %.6f, want %.6f", variance, want)
	}
	// The mean's spread: √(s²·DF/(DF−2)/Pairs) on average, 0.0168.
	if sd := math.Sqrt(meanSq - mean*mean); math.Abs(mean-math.Log(0.9)) > 0.001 || math.Abs(sd-0.0168) > 0.001 {
		t.Errorf("drawn means %.4f ± %.4f, want %.4f ± 0.0168", mean, sd, math.Log(0.9))
	}
	if q := (Path{LogSD: 0.05}).drawn(rng); q.LogSD != 0.05 {
		t.Errorf("a known path was redrawn: %+v", q)
	}
}
