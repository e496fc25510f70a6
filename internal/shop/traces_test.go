package shop

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Old runs' traces go, the newest keep runs' stay (the starting one
// counts), and nothing not named like a run is touched.
func TestPruneTraces(t *testing.T) {
	runs := []string{"20261120T080000Z-0000000a", "20261121T080000Z-0000000b", "20261122T080000Z-0000000c", "20261123T080000Z-0000000d"}
	const current = "20261124T080000Z-0000000e"
	for _, tc := range []struct {
		name    string
		keep    int
		current bool // the current run's directory exists already
		want    []string
	}{
		{"keep every trace", 0, false, runs},
		{"only the new run", 1, false, nil},
		{"the new run and the two before", 3, false, runs[2:]},
		{"the new run's directory exists", 3, true, append(slices.Clone(runs[2:]), current)},
		{"fewer runs than kept", 10, false, runs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, r := range runs {
				if err := os.MkdirAll(filepath.Join(dir, r, "id1-milk-1"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.current {
				if err := os.Mkdir(filepath.Join(dir, current), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// Not runs: a person's folder, a file named like a run, a near miss.
			for _, d := range []string{"my notes", "20201120T080000Z-0000000Z"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "20191120T080000Z-00000001"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			removed, err := PruneTraces(dir, tc.keep, current)
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if runIDName.MatchString(e.Name()) && e.IsDir() {
					left = append(left, e.Name())
				}
			}
			if !slices.Equal(left, tc.want) {
				t.Fatalf("left %v, want %v", left, tc.want)
			}
			if want := len(runs) + btoi(tc.current) - len(tc.want); removed != want {
				t.Fatalf("removed %d, want %d", removed, want)
			}
			for _, keep := range []string{"my notes", "20201120T080000Z-0000000Z", "20191120T080000Z-00000001"} {
				if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
					t.Fatalf("%s was touched: %v", keep, err)
				}
			}
		})
	}
	if n, err := PruneTraces(filepath.Join(t.TempDir(), "none"), 3, current); n != 0 || err != nil {
		t.Fatalf("a missing trace directory: %d, %v", n, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Each run prunes as it starts: after four runs with TraceKeepRuns 2, the
// traces of the last two remain.
func TestRunsPruneOldTraces(t *testing.T) {
	traces := t.TempDir()
	var ids []string
	start := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	for i := range 4 {
		now := start.Add(time.Duration(i) * time.Hour) // run ids sort by their start time
		p := newFakeProvider("milk")
		a := newFakeAgent(map[string]behaviour{"milk": added("Natrel 2% Milk 2 L", "$5.49")})
		cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
		cfg.Agent.TraceDir = traces
		cfg.TraceKeepRuns = 2
		cfg.Now = func() time.Time { return now }
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Summary.RunID)
		// The fake agent writes no trace: make the run's directory as a real one would.
		if err := os.MkdirAll(filepath.Join(traces, res.Summary.RunID, "id1-milk-1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(traces)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, ids[2:]) {
		t.Fatalf("traces left %v, want the last two runs %v", left, ids[2:])
	}
}
