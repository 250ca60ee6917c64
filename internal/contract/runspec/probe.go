package runspec

import (
	"fmt"
	"net/url"
	"strings"
)

// Probe is a text the runner reads over HTTP at both ends of the measured load and hands back
// untouched, for the transport that asked for it to read its evidence from (a tunnel's counters,
// a proxy's statistics): the runner knows no transport. Name is the transport's key for it.
type Probe struct {
	Name string
	URL  string
}

// MaxProbes bounds Run.Probes.
const MaxProbes = 4

// probesValue renders probes as --probes reads them: name=url, by commas.
func probesValue(probes []Probe) string {
	out := make([]string, 0, len(probes))
	for _, p := range probes {
		out = append(out, p.Name+"="+p.URL)
	}
	return strings.Join(out, ",")
}

// parseProbes reads --probes.
func parseProbes(s string) ([]Probe, error) {
	var out []Probe
	for _, item := range strings.Split(s, ",") {
		name, u, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("--probes: %q is not name=url", item)
		}
		out = append(out, Probe{Name: name, URL: u})
	}
	return out, nil
}

// probeProblems says what is wrong with probes: names are part names, URLs plain http ones
// without a comma (the separator).
func probeProblems(probes []Probe) []string {
	var errs []string
	if len(probes) > MaxProbes {
		errs = append(errs, fmt.Sprintf("--probes: at most %d, not %d", MaxProbes, len(probes)))
	}
	for _, p := range probes {
		if !partName.MatchString(p.Name) {
			errs = append(errs, fmt.Sprintf("--probes: name %q is not a DNS label", p.Name))
		}
		u, err := url.Parse(p.URL)
		if err != nil || u.Scheme != "http" || u.Host == "" || strings.Contains(p.URL, ",") {
			errs = append(errs, fmt.Sprintf("--probes: %q is not an http URL without a comma", p.URL))
		}
	}
	return errs
}
