package shop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// ItemStatus is where one item of a run is, as the journal records it.
type ItemStatus string

const (
	// ItemPending: not started yet.
	ItemPending ItemStatus = "pending"
	// ItemInFlight: an agent is working on it. A journal left with in-flight
	// items belongs to a run that was killed: those items were not finished
	// and were not marked in the list.
	ItemInFlight ItemStatus = "in_flight"
	// ItemDone: the item has its final outcome (Result is set).
	ItemDone ItemStatus = "done"
	// ItemInterrupted: the run was stopped while the item was pending or in
	// flight; the list was not changed for it.
	ItemInterrupted ItemStatus = "interrupted"
)

// Attempt is one agent run for one item.
type Attempt struct {
	// Query is what the agent was asked to find (the product, or the user's
	// custom text after a choice).
	Query     string        `json:"query"`
	StartedAt time.Time     `json:"started_at"`
	Duration  time.Duration `json:"duration_ns"`
	// Tool is the terminal tool that ended the attempt, if any.
	Tool string `json:"tool,omitempty"`
	// Reason is the agent's end reason or the run's own (auth_recovery_failed…).
	Reason string       `json:"reason,omitempty"`
	Error  string       `json:"error,omitempty"`
	Turns  int          `json:"turns"`
	Usage  report.Usage `json:"usage"`
	// Trace is the attempt's trace directory under trace_dir, when tracing is on.
	Trace string `json:"trace,omitempty"`
	// Cart is every cart-changing request the attempt's tab sent, with the
	// store's answers (cart attribution, cartattr.go).
	Cart []browser.CartRequest `json:"cart,omitempty"`
}

// JournalItem is one list item in the journal.
type JournalItem struct {
	ItemID   string     `json:"item_id"`
	Name     string     `json:"name"`
	Quantity int        `json:"quantity"`
	Status   ItemStatus `json:"status"`
	// DuplicateOf is the item ID this item repeats (it is not shopped).
	DuplicateOf string             `json:"duplicate_of,omitempty"`
	Attempts    []Attempt          `json:"attempts,omitempty"`
	StartedAt   *time.Time         `json:"started_at,omitempty"`
	FinishedAt  *time.Time         `json:"finished_at,omitempty"`
	Result      *report.ItemResult `json:"result,omitempty"`
	// AnsweredBy is who answered the item's questions (a Home Assistant
	// user's name, when known), in order.
	AnsweredBy []string `json:"answered_by,omitempty"`
	// Confirmations are the item's safety confirmations: the flagged
	// action, whether it was allowed and who answered, in order.
	Confirmations []Confirmation `json:"confirmations,omitempty"`
	// TakeOver is the offer of the item's tab to the household when its
	// agent gave up or a person asked for it (itemtakeover.go).
	TakeOver *TakeOver `json:"take_over,omitempty"`
	// ListUpdated is true once the list says what Result says (or the item
	// needs no update, or was deleted). A done item without it is updated
	// again by the next run (the run was killed between the two).
	ListUpdated bool `json:"list_updated,omitempty"`
}

// TakeOver is an item's tab offered to the household: why, when, and how
// it ended — handed back (with the household's decision, "" for what it
// added) or not (nobody in time, the run stopped) — and the cart requests
// the tab sent meanwhile (the household's).
type TakeOver struct {
	Reason     string                `json:"reason"`
	OfferedAt  time.Time             `json:"offered_at"`
	EndedAt    *time.Time            `json:"ended_at,omitempty"`
	HandedBack bool                  `json:"handed_back"`
	Decision   string                `json:"decision,omitempty"`
	Cart       []browser.CartRequest `json:"cart,omitempty"`
}

// Confirmation is one answer to a safety confirmation of an item's agent.
type Confirmation struct {
	Action  string    `json:"action"`
	Allowed bool      `json:"allowed"`
	By      string    `json:"by,omitempty"` // a Home Assistant user's name, when known
	At      time.Time `json:"at"`
}

// JournalRecord is the content of one journal file.
type JournalRecord struct {
	RunID string `json:"run_id"`
	// PID is the process that ran it: a journal without finished_at whose
	// process is alive belongs to a run still going, not a killed one.
	PID    int    `json:"pid,omitempty"`
	Source string `json:"source,omitempty"`
	// StartedBy and StoppedBy are the Home Assistant users who started and
	// stopped the run, when known (the panel behind ingress).
	StartedBy string `json:"started_by,omitempty"`
	StoppedBy string `json:"stopped_by,omitempty"`
	// Kind is what the run was asked to do (weekly, retry, reshop; empty in
	// journals written before it was recorded); ReshopOf, for a re-shop,
	// the run whose review it belongs to.
	Kind        runstatus.RunKind `json:"kind,omitempty"`
	ReshopOf    string            `json:"reshop_of,omitempty"`
	Store       string            `json:"store"`
	Model       string            `json:"model"`
	Concurrency int               `json:"concurrency"`
	StartedAt   time.Time         `json:"started_at"`
	FinishedAt  *time.Time        `json:"finished_at,omitempty"`
	State       runstatus.State   `json:"state"`
	Error       string            `json:"error,omitempty"`
	Items       []JournalItem     `json:"items"`
	Usage       report.Usage      `json:"usage"`
	Logins      int               `json:"logins"`
	Relaunches  int               `json:"browser_relaunches"`
	Review      *Review           `json:"review,omitempty"`
	// Pack is the review pack, with the household's actions on the cart
	// after the run (appended by app's cart actions).
	Pack *reviewpack.Pack `json:"pack,omitempty"`
	// CartBefore is the cart as read before shopping: the next run compares
	// it with the cart to find what this run's in-flight items added if it
	// was killed.
	CartBefore *Cart `json:"cart_before,omitempty"`
	// ResumedBy is the run that took over this unfinished journal.
	ResumedBy string `json:"resumed_by,omitempty"`
	// TakeOver is what a person did on the run's tabs that needed one
	// (take over and Show me), in order (takeover.go).
	TakeOver []TakeoverEntry `json:"take_over,omitempty"`
}

// Journal keeps a JournalRecord on disk: every change is written at once,
// atomically (temp file, fsync, rename), so a run killed at any moment leaves
// a readable file that says which items were done and which were in flight.
// A Journal with an empty path keeps the record in memory only.
type Journal struct {
	mu   sync.Mutex
	path string
	rec  JournalRecord
	err  error // first write error, reported once by Err
}

// JournalDir is where journals live under the data directory.
func JournalDir(dataDir string) string { return filepath.Join(dataDir, "runs") }

// NewJournal creates the journal of run rec.RunID in dir (created if needed)
// and writes it. dir "" keeps the journal in memory.
func NewJournal(dir string, rec JournalRecord) (*Journal, error) {
	j := &Journal{rec: rec}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create the journal directory %s: %w (check the data_dir setting and its permissions)", dir, err)
		}
		j.path = filepath.Join(dir, rec.RunID+".json")
	}
	if err := j.Update(func(*JournalRecord) {}); err != nil {
		return nil, err
	}
	return j, nil
}

// Discard removes the journal's file (a run that never started leaves
// none); the record stays in memory.
func (j *Journal) Discard() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.path != "" {
		_ = os.Remove(j.path)
		j.path = ""
	}
}

// Path is the journal file ("" when in memory).
func (j *Journal) Path() string { return j.path }

// Update applies f to the record under the lock and writes the result.
// A write error is returned and also kept for Err; the run goes on (a
// journal that cannot be written must not stop the shopping).
func (j *Journal) Update(f func(*JournalRecord)) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	f(&j.rec)
	if j.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(j.rec, "", "  ")
	if err != nil {
		return j.keep(fmt.Errorf("encode the run journal: %w", err))
	}
	if err := atomicfile.Write(j.path, append(data, '\n'), 0o644); err != nil {
		return j.keep(fmt.Errorf("write the run journal %s: %w", j.path, err))
	}
	return nil
}

func (j *Journal) keep(err error) error {
	if j.err == nil {
		j.err = err
	}
	return err
}

// Err is the first write error, if any.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Record returns a deep-enough copy of the current record.
func (j *Journal) Record() JournalRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.rec
	r.Items = append([]JournalItem(nil), j.rec.Items...)
	for i := range r.Items {
		r.Items[i].Attempts = append([]Attempt(nil), r.Items[i].Attempts...)
	}
	return r
}

// item returns the journal item with id (nil when absent). Callers hold mu.
func (r *JournalRecord) item(id string) *JournalItem {
	for i := range r.Items {
		if r.Items[i].ItemID == id {
			return &r.Items[i]
		}
	}
	return nil
}

// ReadJournal reads a journal file.
func ReadJournal(path string) (JournalRecord, error) {
	var rec JournalRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, fmt.Errorf("read the run journal: %w", err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("decode the run journal %s: %w", path, err)
	}
	return rec, nil
}

// RecordAction adds a household action on the cart to a finished run's
// journal (its review pack's Actions) and keeps the cart as read after it
// (the pack's Cart), written atomically like every journal change.
func RecordAction(path string, a reviewpack.Action, cart *reviewpack.Cart) error {
	rec, err := ReadJournal(path)
	if err != nil {
		return err
	}
	if rec.Pack == nil {
		return fmt.Errorf("the run journal %s has no review pack", path)
	}
	rec.Pack.Actions = append(rec.Pack.Actions, a)
	if cart != nil {
		rec.Pack.Cart = cart
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the run journal: %w", err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the run journal %s: %w", path, err)
	}
	return nil
}
