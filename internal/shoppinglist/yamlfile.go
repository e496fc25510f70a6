package shoppinglist

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"

	"github.com/gofrs/flock"
	"go.yaml.in/yaml/v3"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// ErrUnknownItem is returned when a mark names an id the list does not hold
// (the item was removed while the run was going); it is ErrItemGone.
var ErrUnknownItem = ErrItemGone

// ErrReadOnly is returned by the writing methods of a list opened ReadOnly.
var ErrReadOnly = errors.New("shopping list opened read-only")

// FormatError is a shopping list file that cannot be read. The file is left
// exactly as it is.
type FormatError struct {
	Path string
	// Line is the 1-based line of the problem, 0 when unknown.
	Line    int
	Problem string
}

func (e *FormatError) Error() string {
	loc := ""
	if e.Line > 0 {
		loc = " line " + strconv.Itoa(e.Line) + ":"
	}
	return fmt.Sprintf("shopping list %s:%s %s (the file was not changed; fix it and run again)", e.Path, loc, e.Problem)
}

// The keys of an item in the YAML file.
const (
	keyID          = "id"
	keyName        = "name"
	keyStatus      = "status"
	keyTags        = "tags"
	keyExplanation = "explanation"
	// keyDescription is the household's own description of the item; a run
	// reads it (its policy phrases count) and never writes it.
	keyDescription = "description"
	keyError       = "error"
	keyProduct     = "product"
	keyPriceText   = "price_text"
	keyPriceCents  = "price_cents"
	keyQuantity    = "quantity"
	keyURL         = "url"
	// keyAdded holds what a run added (product, price_text, price_cents,
	// quantity, url), apart from what the person asked for (name, quantity).
	keyAdded = "added"
)

// legacyAddedKeys are the flat keys older versions wrote for an added
// product; a mark moves them under keyAdded. "quantity" is not among them:
// it is the person's request and is never changed by a run.
var legacyAddedKeys = []string{keyProduct, keyPriceText, keyPriceCents, keyURL}

// YAMLFile is a shopping list kept in a YAML file:
//
//	items:
//	  - id: 3f9c1a2b
//	    name: 2x milk 2%
//	    status: needs_action        # or completed
//	    tags: ["#404"]
//	    quantity: 2                  # what the person asks for (optional; a run never changes it)
//	    description: no substitute   # the person's (optional; a run never changes it)
//	    explanation: …               # set by MarkNotFound
//	    error: …                     # set by MarkFailed
//	    added:                       # set by MarkCompleted: what the run put in the cart
//	      product: …
//	      price_text: …
//	      price_cents: …
//	      quantity: …
//	      url: …
//	  - bread                        # a bare name is accepted and upgraded
//
// An entry whose name is empty or only tags ("#404") is never given an id,
// shopped or changed: Items reports it with an empty Name (and a
// placeholder ID), so a run can say it was refused.
//
// Every change is made at once and atomically (temporary file in the same
// directory, fsync, rename, directory fsync) under an exclusive lock on the
// sidecar file <list>.lock, after reading the file again under that lock, so
// marks from many goroutines and several processes never lose an update.
// Editors that take no lock are detected instead (see yamlwrite.go): a write
// never replaces content it did not read.
// Comments, key order and keys it does not know survive. A file it cannot read
// is never written.
type YAMLFile struct {
	path        string
	summaryPath string
	readOnly    bool
	log         *slog.Logger
	newID       func() string
	lockPoll    time.Duration
	msgs        messages.Catalog // the summary file's language

	fl  *flock.Flock
	sem chan struct{} // serialises this process's users of fl

	// onLockWait, when set (tests), is called once each time an operation
	// finds the file lock held by someone else and starts waiting.
	onLockWait func()

	// Guarded by the locks (see yamlwrite.go).
	replaced *snapshot      // the file the last update replaced, still open
	written  []byte         // what the last update wrote
	recent   []recentChange // this process's recent changes
	clock    func() time.Time
}

var _ Provider = (*YAMLFile)(nil)

// YAMLOption configures OpenYAML.
type YAMLOption func(*YAMLFile)

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) YAMLOption {
	return func(f *YAMLFile) {
		if l != nil {
			f.log = l
		}
	}
}

// WithIDGenerator sets how new item ids are made (default: 8 random hex
// digits). The generator must not return ids already in the list for long;
// a clash is retried.
func WithIDGenerator(gen func() string) YAMLOption {
	return func(f *YAMLFile) {
		if gen != nil {
			f.newID = gen
		}
	}
}

// WithMessages sets the language the summary file is written in (default
// English).
func WithMessages(m messages.Catalog) YAMLOption { return func(f *YAMLFile) { f.msgs = m } }

// ReadOnly opens the list without ever writing it or its lock file: Items
// gives missing ids in memory only and the mark methods return ErrReadOnly.
// For previews such as `shop --dry-run`.
func ReadOnly() YAMLOption { return func(f *YAMLFile) { f.readOnly = true } }

// OpenYAML opens the shopping list file at path. It reads the file once to
// fail early on a missing or malformed file; nothing is written until a
// method needs to.
func OpenYAML(path string, opts ...YAMLOption) (*YAMLFile, error) {
	if path == "" {
		return nil, errors.New("shopping list: no file given; pass --shopping-list PATH or set shopping_list")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("shopping list %s: %w", path, err)
	}
	// Write through symlinks: renaming over a link would replace the link.
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	f := &YAMLFile{
		path:     abs,
		log:      slog.Default(),
		newID:    randomID,
		lockPoll: 10 * time.Millisecond,
		sem:      make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(f)
	}
	f.summaryPath = summaryPath(abs)
	f.fl = flock.New(abs + ".lock")
	f.log = f.log.With("component", "shoppinglist", "file", abs)

	data, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("shopping list %s does not exist: create it (see examples/shopping_list.yaml): %w", path, err)
		}
		return nil, fmt.Errorf("shopping list %s: %w", path, err)
	}
	if _, err := f.parse(data); err != nil {
		return nil, err
	}
	return f, nil
}

// Path is the absolute path of the list file.
func (f *YAMLFile) Path() string { return f.path }

// SummaryPath is where SendSummary writes: the list's path with its .yaml or
// .yml extension replaced by .summary.md.
func (f *YAMLFile) SummaryPath() string { return f.summaryPath }

func summaryPath(list string) string {
	ext := filepath.Ext(list)
	if e := strings.ToLower(ext); e == ".yaml" || e == ".yml" {
		list = strings.TrimSuffix(list, ext)
	}
	return list + ".summary.md"
}

// Items returns every item of the list in file order. Items without an id
// (and bare-name entries) get one, and the file is saved with it.
func (f *YAMLFile) Items(ctx context.Context) ([]Item, error) {
	var items []Item
	err := f.update(ctx, "read", func(d *document) (bool, error) {
		for _, e := range d.entries {
			items = append(items, e.item)
		}
		return false, nil
	})
	return items, err
}

// Item returns the item with id as the file holds it now; an error wrapping
// ErrItemGone when no item has that id any more.
func (f *YAMLFile) Item(ctx context.Context, id string) (Item, error) {
	var it Item
	err := f.update(ctx, "read item", func(d *document) (bool, error) {
		for _, e := range d.entries {
			if e.item.ID == id {
				it = e.item
				return false, nil
			}
		}
		return false, fmt.Errorf("%s: item %q: %w", f.path, id, ErrItemGone)
	})
	return it, err
}

// MarkCompleted sets the item completed and records the product, price, link
// and quantity added under "added:"; it clears the #404/#failed tags and old
// explanations. The person's name and quantity are left as they are.
func (f *YAMLFile) MarkCompleted(ctx context.Context, id string, added Added) error {
	return f.mark(ctx, id, "mark completed", func(e *entry) {
		m := e.node
		setString(m, keyStatus, string(StatusCompleted))
		for _, k := range legacyAddedKeys {
			deleteKey(m, k)
		}
		a := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setOrDelete(a, keyProduct, added.ProductName)
		setOrDelete(a, keyPriceText, added.Price.Text)
		if added.Price.Known {
			setInt(a, keyPriceCents, int64(added.Price.UnitCents))
		}
		setInt(a, keyQuantity, int64(max(added.Quantity, 1)))
		setOrDelete(a, keyURL, added.URL)
		set(m, keyAdded, a)
		deleteKey(m, keyExplanation)
		deleteKey(m, keyError)
		setRunTag(m, "")
	})
}

// Reopen puts a completed item back on the open list, without the product
// it was completed with (the review pack's Wrong product shops it again).
func (f *YAMLFile) Reopen(ctx context.Context, id string) error {
	return f.mark(ctx, id, "reopen", func(e *entry) {
		setString(e.node, keyStatus, string(StatusNeedsAction))
		deleteKey(e.node, keyAdded)
		for _, k := range legacyAddedKeys {
			deleteKey(e.node, k)
		}
	})
}

// MarkNotFound tags the item #404 (replacing #failed) with the explanation.
func (f *YAMLFile) MarkNotFound(ctx context.Context, id string, explanation string) error {
	return f.mark(ctx, id, "mark not found", func(e *entry) {
		setRunTag(e.node, TagNotFound)
		setString(e.node, keyExplanation, explanation)
		deleteKey(e.node, keyError)
	})
}

// MarkFailed tags the item #failed (replacing #404) with the reason.
func (f *YAMLFile) MarkFailed(ctx context.Context, id string, reason string) error {
	return f.mark(ctx, id, "mark failed", func(e *entry) {
		setRunTag(e.node, TagFailed)
		setString(e.node, keyError, reason)
		deleteKey(e.node, keyExplanation)
	})
}

// SendSummary writes the summary's markdown to SummaryPath, atomically.
func (f *YAMLFile) SendSummary(ctx context.Context, s report.Summary) error {
	if f.readOnly {
		return fmt.Errorf("write summary %s: %w", f.summaryPath, ErrReadOnly)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write summary %s: %w", f.summaryPath, err)
	}
	if err := atomicfile.Write(f.summaryPath, []byte(s.MarkdownIn(f.msgs)), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	f.log.Info("summary written", "path", f.summaryPath)
	return nil
}

func (f *YAMLFile) mark(ctx context.Context, id, what string, change func(*entry)) error {
	if f.readOnly {
		return fmt.Errorf("%s %q: %w", what, id, ErrReadOnly)
	}
	var rec recentChange
	err := f.update(ctx, what, func(d *document) (bool, error) {
		for i := range d.entries {
			e := &d.entries[i]
			if e.item.ID != id {
				continue
			}
			if e.item.Name == "" {
				return false, fmt.Errorf("%s %q in %s: %w", what, id, f.path, errNoName)
			}
			before := encodeNode(e.node)
			change(e)
			if bytes.Equal(before, encodeNode(e.node)) {
				rec = recentChange{} // nothing changed: nothing to apply again
				return false, nil
			}
			rec = recentChange{id: id, before: before, apply: change}
			return true, nil
		}
		return false, fmt.Errorf("%s %q in %s: %w", what, id, f.path, ErrUnknownItem)
	})
	if err == nil && rec.apply != nil {
		rec.at = f.now()
		f.lockedRemember(rec)
	}
	return err
}

// lockedRemember records a mark for reapply (under the process lock).
func (f *YAMLFile) lockedRemember(c recentChange) {
	f.sem <- struct{}{}
	f.remember(c)
	<-f.sem
}

// lock takes this process's semaphore, then the file lock, waiting for
// either as long as ctx allows.
func (f *YAMLFile) lock(ctx context.Context, what string) (unlock func(), err error) {
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: waiting for the shopping list lock: %w", what, ctx.Err())
	}
	release := func() { <-f.sem }
	ok, err := f.fl.TryLock()
	if err != nil {
		release()
		return nil, fmt.Errorf("%s: lock %s: %w", what, f.fl.Path(), err)
	}
	if !ok {
		if f.onLockWait != nil {
			f.onLockWait()
		}
		f.log.Debug("waiting for another process to release the list lock", "lock", f.fl.Path())
		t := time.NewTicker(f.lockPoll)
		defer t.Stop()
		for !ok {
			select {
			case <-ctx.Done():
				release()
				return nil, fmt.Errorf("%s: another process holds the lock %s: %w", what, f.fl.Path(), ctx.Err())
			case <-t.C:
			}
			if ok, err = f.fl.TryLock(); err != nil {
				release()
				return nil, fmt.Errorf("%s: lock %s: %w", what, f.fl.Path(), err)
			}
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if err := f.fl.Unlock(); err != nil {
				f.log.Error("releasing the list lock failed", "lock", f.fl.Path(), "err", err)
			}
			release()
		})
	}, nil
}

func randomID() string {
	var b [4]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; fall back to time.
		return strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return hex.EncodeToString(b[:])
}

// document is a parsed list file: the node tree and its items.
type document struct {
	path    string
	root    *yaml.Node // the document node; Kind 0 for an empty file
	seq     *yaml.Node // the items sequence; nil when the file has none
	entries []entry
}

// entry is one item of the file.
type entry struct {
	index int        // in seq.Content
	node  *yaml.Node // mapping node, or the scalar of a bare name until upgraded
	item  Item
}

var lineRE = regexp.MustCompile(`^line (\d+): `)

func (f *YAMLFile) parse(data []byte) (*document, error) {
	ferr := func(line int, format string, args ...any) error {
		return &FormatError{Path: f.path, Line: line, Problem: fmt.Sprintf(format, args...)}
	}
	d := &document{path: f.path, root: &yaml.Node{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(d.root); err != nil && !errors.Is(err, io.EOF) {
		line, problem := 0, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := lineRE.FindStringSubmatch(problem); m != nil {
			line, _ = strconv.Atoi(m[1])
			problem = strings.TrimPrefix(problem, m[0])
		}
		return nil, ferr(line, "%s", problem)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, ferr(extra.Line, "the file holds more than one YAML document (a second '---'); keep one")
	} else if !errors.Is(err, io.EOF) {
		return nil, ferr(0, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if d.root.Kind == 0 || len(d.root.Content) == 0 {
		return d, nil // empty file
	}
	top := d.root.Content[0]
	switch top.Kind {
	case yaml.MappingNode:
		if err := checkKeys(top, ferr); err != nil {
			return nil, err
		}
		_, v := lookup(top, "items")
		if v == nil || isNull(v) {
			return d, nil
		}
		if v.Kind != yaml.SequenceNode {
			return nil, ferr(v.Line, "items must be a list (\"- milk\" lines), found %s", kindName(v))
		}
		d.seq = v
	case yaml.SequenceNode:
		d.seq = top // a bare list of items is accepted too
	case yaml.ScalarNode:
		if isNull(top) {
			return d, nil
		}
		fallthrough
	default:
		return nil, ferr(top.Line, "the file must be a mapping with an items list, found %s", kindName(top))
	}

	for i, n := range d.seq.Content {
		e := entry{index: i, node: n}
		switch {
		case n.Kind == yaml.ScalarNode && isNull(n):
			continue // an empty "-" line: left alone
		case n.Kind == yaml.ScalarNode:
			e.item = Item{Status: StatusNeedsAction}
			e.item.SetName(n.Value)
		case n.Kind == yaml.MappingNode:
			it, err := readItem(n, ferr)
			if err != nil {
				return nil, err
			}
			e.item = it
		default:
			return nil, ferr(n.Line, "item %d must be a name or a mapping with a name, found %s", i+1, kindName(n))
		}
		if e.item.Name == "" && e.item.ID == "" {
			// Never written: a placeholder so a run can report it. By the
			// entry's place in the list, not its line: the first read
			// turns the bare names above it into mappings (more lines), and
			// a run that reads the list again must know it as the same one.
			e.item.ID = fmt.Sprintf("unnamed-item-%d", i+1)
		}
		d.entries = append(d.entries, e)
	}
	return d, nil
}

type errorf func(line int, format string, args ...any) error

func readItem(m *yaml.Node, ferr errorf) (Item, error) {
	if err := checkKeys(m, ferr); err != nil {
		return Item{}, err
	}
	str := func(key string) (string, error) {
		k, v := lookup(m, key)
		if v == nil || isNull(v) {
			return "", nil
		}
		if v.Kind != yaml.ScalarNode {
			return "", ferr(k.Line, "%s must be text, found %s", key, kindName(v))
		}
		return v.Value, nil
	}
	integer := func(key string) (int64, bool, error) {
		k, v := lookup(m, key)
		if v == nil || isNull(v) {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			return 0, false, ferr(k.Line, "%s must be a whole number, found %q", key, v.Value)
		}
		return n, true, nil
	}

	var it Item
	var err error
	if it.ID, err = str(keyID); err != nil {
		return it, err
	}
	it.ID = strings.TrimSpace(it.ID)
	name, err := str(keyName)
	if err != nil {
		return it, err
	}
	if k, _ := lookup(m, keyName); k == nil {
		return it, ferr(m.Line, "item has no name (add \"name: …\")")
	}
	status, err := str(keyStatus)
	if err != nil {
		return it, err
	}
	switch Status(status) {
	case "", StatusNeedsAction:
		it.Status = StatusNeedsAction
	case StatusCompleted:
		it.Status = StatusCompleted
	default:
		k, _ := lookup(m, keyStatus)
		return it, ferr(k.Line, "status %q is not %s or %s", status, StatusNeedsAction, StatusCompleted)
	}

	if k, v := lookup(m, keyTags); v != nil && !isNull(v) {
		switch v.Kind {
		case yaml.SequenceNode:
			for _, t := range v.Content {
				if t.Kind != yaml.ScalarNode {
					return it, ferr(t.Line, "tags must be a list of words like \"#404\", found %s", kindName(t))
				}
				it.addTags(strings.Fields(t.Value)...)
			}
		case yaml.ScalarNode:
			it.addTags(strings.Fields(v.Value)...)
		default:
			return it, ferr(k.Line, "tags must be a list of words like \"#404\", found %s", kindName(v))
		}
	}
	it.SetName(name)

	explanation, err := str(keyExplanation)
	if err != nil {
		return it, err
	}
	reason, err := str(keyError)
	if err != nil {
		return it, err
	}
	it.Explanation = explanation
	if it.Explanation == "" {
		it.Explanation = reason
	}
	// The household's description: text only. Another shape (a list, a
	// mapping) was a key of the person's own before it meant anything
	// here; it sets nothing rather than make the list unreadable.
	if _, v := lookup(m, keyDescription); v != nil && v.Kind == yaml.ScalarNode && !isNull(v) {
		it.Description = v.Value
	}
	for _, key := range []string{keyProduct, keyPriceText, keyURL} {
		if _, err := str(key); err != nil {
			return it, err
		}
	}
	if _, _, err := integer(keyPriceCents); err != nil {
		return it, err
	}
	if q, ok, err := integer(keyQuantity); err != nil {
		return it, err
	} else if ok {
		if q < 1 || q > MaxQuantity {
			k, _ := lookup(m, keyQuantity)
			return it, ferr(k.Line, "quantity %d is not between 1 and %d", q, MaxQuantity)
		}
		// The quantity key counts packages, as "2x" does.
		it.Quantity, it.Pieces = int(q), false
	}
	return it, nil
}

func (it *Item) addTags(tags ...string) {
	for _, t := range tags {
		t = normaliseTag(t)
		if t != "#" && !it.HasTag(t) {
			it.Tags = append(it.Tags, t)
		}
	}
}

// checkKeys rejects non-scalar and repeated keys in a mapping.
func checkKeys(m *yaml.Node, ferr errorf) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			return ferr(k.Line, "keys must be plain words, found %s", kindName(k))
		}
		if prev, ok := seen[k.Value]; ok {
			return ferr(k.Line, "key %q appears twice (first on line %d)", k.Value, prev)
		}
		seen[k.Value] = k.Line
	}
	return nil
}

// assignedID is an id assignIDs gave to the entry named name.
type assignedID struct{ id, name string }

// assignIDs gives every named item without an id (or with an id an earlier
// item already uses) a new one, upgrading bare names to mappings. Entries
// without a name are left exactly as written. It returns what it assigned.
func (d *document) assignIDs(gen func() string) []assignedID {
	taken := map[string]bool{}
	for _, e := range d.entries {
		taken[e.item.ID] = true
	}
	fresh := func() string {
		for tries := 0; tries < 100; tries++ {
			if id := gen(); id != "" && !taken[id] {
				return id
			}
		}
		for {
			if id := randomID(); !taken[id] {
				return id
			}
		}
	}
	seen := map[string]bool{}
	var out []assignedID
	for i := range d.entries {
		e := &d.entries[i]
		if e.item.Name == "" {
			continue
		}
		if id := e.item.ID; id != "" && !seen[id] && e.node.Kind == yaml.MappingNode {
			seen[id] = true
			continue
		}
		id := fresh()
		taken[id], seen[id] = true, true
		name := e.node.Value
		if e.node.Kind == yaml.MappingNode {
			name = rawName(e.node)
		}
		d.setID(e, id)
		out = append(out, assignedID{id: id, name: name})
	}
	return out
}

// setID gives entry e the id, upgrading a bare name to a mapping.
func (d *document) setID(e *entry, id string) {
	e.item.ID = id
	if e.node.Kind == yaml.ScalarNode {
		e.node = upgrade(e.node)
		d.seq.Content[e.index] = e.node
	}
	if k, _ := lookup(e.node, keyID); k == nil {
		e.node.Content = append([]*yaml.Node{scalar(keyID), scalar(id)}, e.node.Content...)
	} else {
		setString(e.node, keyID, id)
	}
}

func (d *document) hasID(id string) bool {
	for _, e := range d.entries {
		if e.item.ID == id {
			return true
		}
	}
	return false
}

// upgrade turns a bare-name scalar into a mapping {name: …}, moving its
// comments to the mapping.
func upgrade(s *yaml.Node) *yaml.Node {
	name := scalar(s.Value)
	name.Style = s.Style
	name.LineComment = s.LineComment
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
		HeadComment: s.HeadComment, FootComment: s.FootComment,
		Content: []*yaml.Node{scalar(keyName), name}}
	return m
}

func (d *document) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d.root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ---- node helpers ----

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias (*name); write the value out"
	}
	return "nothing"
}

// lookup finds key in mapping m.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// set replaces the value of key (keeping the value node's comments) or
// appends key: value.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.HeadComment, v.LineComment, v.FootComment = old.HeadComment, old.LineComment, old.FootComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func setString(m *yaml.Node, key, value string) {
	v := scalar(value)
	if strings.Contains(value, "\n") {
		v.Style = yaml.LiteralStyle
	}
	set(m, key, v)
}

func setInt(m *yaml.Node, key string, value int64) {
	set(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(value, 10)})
}

func setOrDelete(m *yaml.Node, key, value string) {
	if value == "" {
		deleteKey(m, key)
		return
	}
	setString(m, key, value)
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// setRunTag removes #404 and #failed from the item's tags and name and adds
// tag (when not empty). Other tags and the list's style are kept.
func setRunTag(m *yaml.Node, tag string) {
	// The name: drop run tags typed into it ("butter #404").
	if _, nv := lookup(m, keyName); nv != nil && nv.Kind == yaml.ScalarNode {
		words := strings.Fields(nv.Value)
		kept := words[:0:0]
		for _, w := range words {
			if !(isTag(w) && IsRunTag(w)) {
				kept = append(kept, w)
			}
		}
		// Never leave the name empty: the person's words stay.
		if len(kept) != len(words) && Parse(strings.Join(kept, " ")).Name != "" {
			nv.Value = strings.Join(kept, " ")
		}
	}

	_, tv := lookup(m, keyTags)
	var tags []*yaml.Node
	style := yaml.FlowStyle
	if tv != nil && tv.Kind == yaml.SequenceNode {
		style = tv.Style
		for _, t := range tv.Content {
			if !IsRunTag(t.Value) {
				tags = append(tags, t)
			}
		}
	} else if tv != nil && tv.Kind == yaml.ScalarNode && !isNull(tv) {
		for _, w := range strings.Fields(tv.Value) {
			if !IsRunTag(w) {
				tags = append(tags, scalar(w))
			}
		}
	}
	if tag != "" {
		tags = append(tags, scalar(tag))
	}
	if len(tags) == 0 {
		deleteKey(m, keyTags)
		return
	}
	set(m, keyTags, &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: style, Content: tags})
}
