package homeassistant

import (
	"context"
	"fmt"
	"strings"
)

// Add puts items on the to-do list (todo.add_item, one call per item), in
// order. Not retried: a second add_item would add the item twice.
func (p *TodoProvider) Add(ctx context.Context, names ...string) error {
	for _, n := range names {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if _, err := p.c.CallService(ctx, "todo", "add_item", &Target{EntityID: []string{p.entity}}, map[string]any{"item": n}, false); err != nil {
			return fmt.Errorf("add %q to %s: %w", n, p.entity, err)
		}
	}
	return nil
}
