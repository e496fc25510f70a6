package shoppinglist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
)

// Editors that take no lock.
//
// The lock file only binds gemini-supply processes. A person's editor, a
// script's `>>` append or a program that rewrites the file in place takes no
// lock, so every write here is optimistic:
//
//   - a read that does not parse may be an editor's half-written file: it is
//     read again until the content settles (settleReads identical failures);
//   - right before the new file is renamed over the list, the list is read
//     again: if it changed since it was read (other bytes or another file),
//     the change is made again on the fresh content (at most maxRounds times);
//   - right after the rename, the file that was replaced is checked through
//     the descriptor kept open since the read: an editor that had opened it
//     before the rename may have written there. Its content is then adopted
//     and this process's recent changes are applied to it again;
//   - the replaced file stays open until the next update, which checks it
//     again first (a write that landed a moment after the rename);
//   - a program that read the list, then rewrote it in place after a mark
//     (a read-modify-write without the lock) brings an entry back exactly as
//     it was before the mark: recent marks (reapplyWindow) whose entry is
//     found exactly in its state before the mark are applied again.
//
// No edit is overwritten: when an editor's late write and a later change of
// the list both happened, the editor's version is saved next to the list
// (<list>.conflict-<time>.yaml) and a warning is logged.
const (
	maxRounds     = 100
	settleReads   = 4
	settleWait    = 30 * time.Millisecond
	reapplyWindow = 2 * time.Minute
	recentMax     = 512
)

// errNoName refuses to change an entry whose name is empty or only tags.
var errNoName = errors.New("the item has no name (only tags, or empty); it is left exactly as written")

// snapshot is the list file as read: its bytes and the open file they came
// from (kept open: a writer that opened the file before it was replaced
// still writes there).
type snapshot struct {
	file *os.File
	data []byte
}

func (s *snapshot) close() {
	if s != nil && s.file != nil {
		_ = s.file.Close()
	}
}

// changedSince reports whether the file s was read from now holds other
// bytes than s.data, and returns what it holds.
func (s *snapshot) changedSince() (bool, []byte, error) {
	st, err := s.file.Stat()
	if err != nil {
		return false, nil, err
	}
	if st.Size() == int64(len(s.data)) {
		now := make([]byte, len(s.data))
		if _, err := s.file.ReadAt(now, 0); err != nil && !errors.Is(err, io.EOF) {
			return false, nil, err
		}
		if bytes.Equal(now, s.data) {
			return false, nil, nil
		}
	}
	now, err := io.ReadAll(io.NewSectionReader(s.file, 0, 1<<40))
	return true, now, err
}

// recentChange is one change this process made, kept to apply it again to a
// version of the file that lost it.
type recentChange struct {
	at time.Time
	// mark: the entry with id, exactly as before (encoded), gets apply.
	id     string
	before []byte
	apply  func(*entry)
	// assigned id: the id-less entry named name gets id.
	name string
}

// readSettled opens and reads the list; a file that does not parse is read
// again until the same bytes failed settleReads times (an editor's
// half-written file settles; a broken one does not).
func (f *YAMLFile) readSettled(ctx context.Context, what string) (*snapshot, *document, error) {
	var last []byte
	same := 0
	for {
		fh, err := os.Open(f.path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: read shopping list %s: %w", what, f.path, err)
		}
		data, err := io.ReadAll(fh)
		if err != nil {
			_ = fh.Close()
			return nil, nil, fmt.Errorf("%s: read shopping list %s: %w", what, f.path, err)
		}
		d, perr := f.parse(data)
		if perr == nil {
			return &snapshot{file: fh, data: data}, d, nil
		}
		_ = fh.Close()
		if bytes.Equal(data, last) {
			same++
		} else {
			last, same = data, 1
		}
		if same >= settleReads {
			return nil, nil, perr
		}
		if err := f.pause(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: %w (last read: %w)", what, err, perr)
		}
	}
}

func (f *YAMLFile) pause(ctx context.Context) error {
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// update runs change on a fresh read of the file, under the locks, and saves
// the file when ids were assigned or change reports a change — never over
// an edit it did not read (see "Editors that take no lock").
func (f *YAMLFile) update(ctx context.Context, what string, change func(*document) (bool, error)) error {
	if f.readOnly {
		snap, d, err := f.readSettled(ctx, what)
		if err != nil {
			return err
		}
		snap.close()
		d.assignIDs(f.newID)
		_, err = change(d)
		return err
	}
	unlock, err := f.lock(ctx, what)
	if err != nil {
		return err
	}
	defer unlock()

	var goneIn []byte // the content in which change last found its item gone
	gone := 0         // how many reads in a row of goneIn
	for round := 0; ; round++ {
		if round >= maxRounds {
			return fmt.Errorf("%s: the shopping list %s kept changing while it was being updated; try again", what, f.path)
		}
		snap, d, err := f.readSettled(ctx, what)
		if err != nil {
			return err
		}
		adopted, retry, err := f.adoptLateWrite(ctx, snap, &d)
		if err != nil || retry {
			snap.close()
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			continue
		}
		reapplied := f.reapply(d)
		assigned := d.assignIDs(f.newID)
		changed, err := change(d)
		if errors.Is(err, ErrItemGone) {
			if bytes.Equal(goneIn, snap.data) {
				gone++
			} else {
				goneIn, gone = snap.data, 1
			}
		}
		if errors.Is(err, ErrItemGone) && (gone < settleReads || len(snap.data) == 0) {
			// An editor's half-written (or just truncated) file may lack
			// the item: only the same content, read settleReads times with
			// pauses, proves it gone — an empty file never does.
			snap.close()
			if perr := f.pause(ctx); perr != nil {
				return err
			}
			continue
		}
		if err != nil {
			snap.close()
			return err
		}
		if !changed && assigned == nil && reapplied == 0 && !adopted {
			snap.close()
			return nil
		}
		out, err := d.encode()
		if err != nil {
			snap.close()
			return fmt.Errorf("%s: encode shopping list %s: %w", what, f.path, err)
		}
		perm := fs.FileMode(0o644)
		if st, err := snap.file.Stat(); err == nil {
			perm = st.Mode().Perm()
		}
		// Between the read and the rename an editor may have written.
		again := false
		err = atomicfile.WriteChecked(f.path, out, perm, func() error {
			if f.pathChanged(snap) {
				again = true
				return errRetry
			}
			return nil
		})
		if again {
			snap.close()
			f.log.Debug("the list changed while it was being updated; updating the fresh content", "what", what)
			continue
		}
		if err != nil {
			snap.close()
			return fmt.Errorf("%s: %w", what, err)
		}
		for _, a := range assigned {
			f.remember(recentChange{at: f.now(), id: a.id, name: a.name})
		}
		if len(assigned) > 0 {
			f.log.Info("assigned ids to new items", "count", len(assigned))
		}
		f.setReplaced(snap, out)
		// An editor that opened the file before the rename may have
		// written into the replaced file just now.
		if late, _, _ := snap.changedSince(); late {
			continue // adopted on the next round
		}
		return nil
	}
}

var errRetry = errors.New("the list changed since it was read")

// pathChanged reports whether the list file is no longer the file and the
// bytes snap read.
func (f *YAMLFile) pathChanged(snap *snapshot) bool {
	st, err := os.Stat(f.path)
	if err != nil {
		return true
	}
	if sst, err := snap.file.Stat(); err != nil || !os.SameFile(st, sst) || st.Size() != int64(len(snap.data)) {
		return true
	}
	now, err := os.ReadFile(f.path)
	return err != nil || !bytes.Equal(now, snap.data)
}

// setReplaced keeps the file an update replaced open (until the next update
// checks it) and remembers what the list holds now.
func (f *YAMLFile) setReplaced(snap *snapshot, written []byte) {
	f.replaced.close()
	f.replaced = snap
	f.written = written
}

// adoptLateWrite checks the file the last update replaced: when an editor
// wrote into it after it was read, its content is the editor's version of
// the list. When the list still holds exactly what this process wrote, the
// editor's version replaces it (this process's changes are applied to it
// again by reapply); when the list changed too, the editor's version is
// saved next to the list, never dropped.
// retry is true when the editor's version is half-written (read again).
func (f *YAMLFile) adoptLateWrite(ctx context.Context, snap *snapshot, d **document) (adopted, retry bool, err error) {
	old := f.replaced
	if old == nil {
		return false, false, nil
	}
	late, data, err := old.changedSince()
	if err != nil || !late {
		return false, false, nil
	}
	od, perr := f.parse(data)
	if perr != nil {
		// Half-written: wait for the editor to finish (bounded by the rounds).
		if err := f.pause(ctx); err != nil {
			return false, false, fmt.Errorf("an editor is writing the shopping list: %w (last read: %w)", err, perr)
		}
		return false, true, nil
	}
	f.replaced = nil
	defer old.close()
	if !bytes.Equal(snap.data, f.written) {
		conflict := f.conflictPath()
		if err := atomicfile.Write(conflict, data, 0o644); err != nil {
			return false, false, fmt.Errorf("save an editor's version of the list that another change overtook: %w", err)
		}
		f.log.Warn("an editor wrote the list while it was being updated and the list changed again since; its version was saved next to the list — merge it by hand", "saved", conflict)
		return false, false, nil
	}
	f.log.Info("an editor wrote the list while it was being updated; its edit is kept and this run's updates applied to it")
	*d = od
	return true, false, nil
}

func (f *YAMLFile) conflictPath() string {
	ext := filepath.Ext(f.path)
	return fmt.Sprintf("%s.conflict-%s%s", f.path[:len(f.path)-len(ext)], f.now().UTC().Format("20060102T150405.000000000Z"), ext)
}

func (f *YAMLFile) now() time.Time {
	if f.clock != nil {
		return f.clock()
	}
	return time.Now()
}

// remember records a change to apply again to a version of the file that
// lost it.
func (f *YAMLFile) remember(c recentChange) {
	f.recent = append(f.recent, c)
	if len(f.recent) > recentMax {
		f.recent = append(f.recent[:0:0], f.recent[len(f.recent)-recentMax:]...)
	}
}

// reapply applies recent changes that d lost: ids assigned to entries that
// are id-less again, and marks whose entry is exactly as it was before the
// mark (a program rewrote the file from a read made before the mark). It
// returns how many it applied.
func (f *YAMLFile) reapply(d *document) int {
	cutoff := f.now().Add(-reapplyWindow)
	n := 0
	kept := f.recent[:0]
	for _, c := range f.recent {
		if c.at.Before(cutoff) {
			continue
		}
		kept = append(kept, c)
		if c.apply == nil {
			if d.hasID(c.id) {
				continue
			}
			for i := range d.entries {
				e := &d.entries[i]
				if e.item.ID == "" && e.item.Name != "" && e.node.Kind == yaml.ScalarNode && e.node.Value == c.name ||
					e.item.ID == "" && e.item.Name != "" && e.node.Kind == yaml.MappingNode && rawName(e.node) == c.name {
					d.setID(e, c.id)
					n++
					break
				}
			}
			continue
		}
		for i := range d.entries {
			e := &d.entries[i]
			if e.item.ID == c.id && e.node.Kind == yaml.MappingNode && bytes.Equal(encodeNode(e.node), c.before) {
				c.apply(e)
				n++
				f.log.Info("the list was rewritten from a copy older than an update; the update is applied again", "item", c.id)
			}
		}
	}
	f.recent = kept
	return n
}

func rawName(m *yaml.Node) string {
	if _, v := lookup(m, keyName); v != nil {
		return v.Value
	}
	return ""
}

// encodeNode is a compact fingerprint of a node's content (kinds and
// values, comments left out), to compare an entry with its state before a
// mark.
func encodeNode(n *yaml.Node) []byte {
	var b []byte
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		b = append(b, byte('0'+n.Kind))
		b = strconv.AppendQuote(b, n.Value)
		for _, c := range n.Content {
			walk(c)
		}
		b = append(b, ')')
	}
	walk(n)
	return b
}

// CheckWritable reports whether the list can be updated: the file itself,
// its directory (the new version is written next to it, then renamed over
// it) and its lock file. A run calls it before shopping, so a list it
// could not update stops the run instead of shopping everything again next
// time.
func (f *YAMLFile) CheckWritable(ctx context.Context) error {
	if f.readOnly {
		return fmt.Errorf("shopping list %s: %w", f.path, ErrReadOnly)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fh, err := os.OpenFile(f.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("shopping list %s cannot be written: %w (make the file writable)", f.path, err)
	}
	_ = fh.Close()
	dir := filepath.Dir(f.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".check-*")
	if err != nil {
		return fmt.Errorf("shopping list %s cannot be updated: its directory %s is not writable: %w (updates are written next to the list, then renamed over it)", f.path, dir, err)
	}
	_ = tmp.Close()
	_ = os.Remove(tmp.Name())
	unlock, err := f.lock(ctx, "check the list can be written")
	if err != nil {
		return err
	}
	unlock()
	return nil
}
