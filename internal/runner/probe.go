package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/bounded"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// probeTimeout bounds one read of a probe: a probe that does not answer costs only its evidence.
const probeTimeout = 3 * time.Second

// probes reads the transport's probes (runspec.Probe) at the start of the measured load; stop
// reads them again at its end. The texts go to the report untouched (bounded): reading them is the
// transport's.
type probes struct {
	list   []runspec.Probe
	before []report.Probe
}

func startProbes(ctx context.Context, list []runspec.Probe) *probes {
	p := &probes{list: list}
	for _, pr := range list {
		text, err := readProbe(ctx, pr.URL)
		p.before = append(p.before, report.Probe{Name: pr.Name, Before: text, Error: errText(err)})
	}
	return p
}

// stop reads every probe again: nil without any.
func (p *probes) stop(ctx context.Context) []report.Probe {
	for i, pr := range p.list {
		text, err := readProbe(ctx, pr.URL)
		p.before[i].After = text
		if p.before[i].Error == "" {
			p.before[i].Error = errText(err)
		}
	}
	return p.before
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return bounded.Text(err.Error(), 256)
}

// readProbe GETs url's text, bounded.
func readProbe(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, report.MaxProbeText))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(body), nil
}
