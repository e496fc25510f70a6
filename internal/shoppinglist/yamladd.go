package shoppinglist

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Add appends items to the end of the list, each a mapping with its name
// (and an id, as every item gets at its first read); every comment and
// every other item stay as they are. An empty file becomes a list with an
// items key.
func (f *YAMLFile) Add(ctx context.Context, names ...string) error {
	if f.readOnly {
		return fmt.Errorf("add to the shopping list: %w", ErrReadOnly)
	}
	return f.update(ctx, "add to the shopping list", func(d *document) (bool, error) {
		if d.seq == nil {
			if err := d.makeItems(); err != nil {
				return false, err
			}
		}
		added := false
		for _, n := range names {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{scalar(keyID), scalar(f.newID()), scalar(keyName), scalar(n)}}
			d.seq.Content = append(d.seq.Content, m)
			added = true
		}
		return added, nil
	})
}

// makeItems gives a document without an items sequence one: an empty file
// becomes "items: []", a mapping without items gets the key.
func (d *document) makeItems() error {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if d.root.Kind == 0 || len(d.root.Content) == 0 {
		d.root = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	top := d.root.Content[0]
	if top.Kind == yaml.ScalarNode && isNull(top) {
		top = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: top.HeadComment, FootComment: top.FootComment}
		d.root.Content[0] = top
	}
	if top.Kind != yaml.MappingNode {
		return errors.New("add to the shopping list: the file is not a mapping with an items list")
	}
	if k, v := lookup(top, "items"); k != nil {
		*v = *seq
		d.seq = v
		return nil
	}
	top.Content = append(top.Content, scalar("items"), seq)
	d.seq = seq
	return nil
}
