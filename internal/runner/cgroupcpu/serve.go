package cgroupcpu

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/schedstat"
)

// Handler serves the accounting of the cgroup at root, read at each request, with its threads
// when the request asks for them (runspec.ThreadsQuery): a sidecar's container answers the
// runner, which samples it at the ends of its measured window and, threads too, within its load.
func Handler(root string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read := Read
		if r.URL.Query().Has(runspec.ThreadsQuery) {
			read = ReadThreads
		}
		s, err := read(root)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
}

// maxSampleBytes bounds a served sample: its counters and up to schedstat.MaxTasks threads'.
const maxSampleBytes = 64 + schedstat.MaxTasks*48

// Fetch asks a sidecar's Handler for its sample, within a second: the runner's window must not
// wait on a sidecar that does not answer.
func Fetch(ctx context.Context, url string) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Sample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Sample{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return Sample{}, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var s Sample
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, maxSampleBytes)).Decode(&s); err != nil {
		return Sample{}, fmt.Errorf("%s: %w", url, err)
	}
	return s, nil
}
