package shop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// runIDName is what newRunID makes: only directories named like this are
// ever removed from the trace directory (a user's own folders there are not).
var runIDName = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$`)

// PruneTraces keeps the traces of the newest keep runs in traceDir and
// removes the older runs' directories; current (the run starting) counts as
// one of them whether its directory exists yet or not. keep <= 0 keeps
// everything. It returns how many runs' traces it removed.
func PruneTraces(traceDir string, keep int, current string) (int, error) {
	if traceDir == "" || keep <= 0 {
		return 0, nil
	}
	entries, err := os.ReadDir(traceDir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the trace directory: %w", err)
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() && runIDName.MatchString(e.Name()) && e.Name() != current {
			runs = append(runs, e.Name())
		}
	}
	slices.Sort(runs) // run ids sort by time
	old := len(runs) - (keep - 1)
	removed := 0
	for _, name := range runs[:max(old, 0)] {
		if err := os.RemoveAll(filepath.Join(traceDir, name)); err != nil {
			return removed, fmt.Errorf("remove old traces: %w", err)
		}
		removed++
	}
	return removed, nil
}

// pruneTraces applies Config.TraceKeepRuns when the run starts; a failure is
// logged, never a reason not to shop.
func (r *run) pruneTraces() {
	n, err := PruneTraces(r.agentCfg.TraceDir, r.cfg.TraceKeepRuns, r.id)
	switch {
	case err != nil:
		r.log.Warn("cannot remove old traces", "dir", r.agentCfg.TraceDir, "err", err)
	case n > 0:
		r.log.Info("removed the traces of older runs", "runs", n, "keep", r.cfg.TraceKeepRuns)
	}
}
