package homeassistant

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// BenchmarkPing is one command round trip to the (local) fake.
func BenchmarkPing(b *testing.B) {
	f, err := fakeha.Start(fakeha.Options{Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	c, err := Dial(context.Background(), testOptions(f, nil))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarkParallel is todo.update_item from 8 goroutines at once.
func BenchmarkMarkParallel(b *testing.B) {
	f, err := fakeha.Start(fakeha.Options{Token: testToken, Coalesce: true})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var items []fakeha.TodoItem
	for i := range 64 {
		items = append(items, fakeha.TodoItem{UID: fmt.Sprint(i), Summary: fmt.Sprintf("item %d", i)})
	}
	f.AddTodoList("todo.shopping_list", "Shopping List", fakeha.ShoppingListFeatures, items...)
	c, err := Dial(context.Background(), testOptions(f, nil))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p := NewTodoProvider(c, TodoOptions{})
	ctx := context.Background()
	if _, err := p.Items(ctx); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if err := p.MarkCompleted(ctx, fmt.Sprint(i%64), shoppinglist.Added{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDispatchCoalesced decodes one coalesced frame of 16 results.
func BenchmarkDispatchCoalesced(b *testing.B) {
	s := &session{c: &Client{log: slog.New(slog.DiscardHandler)}, pending: map[int64]chan reply{}, routes: map[int64]*Subscription{}}
	frame := []byte("[")
	for i := range 16 {
		if i > 0 {
			frame = append(frame, ',')
		}
		frame = fmt.Appendf(frame, `{"id":%d,"type":"result","success":true,"result":{"context":{"id":"01H"}}}`, i+1)
	}
	frame = append(frame, ']')
	b.ReportAllocs()
	for b.Loop() {
		s.handleFrame(frame)
	}
}

// benchList is a fake with a 64-item list (a large household list) and a
// provider that has read it.
func benchList(b *testing.B) (*fakeha.Server, *Client, *TodoProvider) {
	b.Helper()
	f, err := fakeha.Start(fakeha.Options{Token: testToken, Coalesce: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(f.Close)
	var items []fakeha.TodoItem
	for i := range 64 {
		items = append(items, fakeha.TodoItem{UID: fmt.Sprint(i), Summary: fmt.Sprintf("item %d", i)})
	}
	f.AddTodoList("todo.shopping_list", "Shopping List", fakeha.LocalTodoFeatures, items...)
	c, err := Dial(context.Background(), testOptions(f, nil))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	p := NewTodoProvider(c, TodoOptions{})
	if _, err := p.Items(context.Background()); err != nil {
		b.Fatal(err)
	}
	return f, c, p
}

// BenchmarkMarkVerified is one verified mark that changes the item: read
// the item, todo.update_item, read it back (64-item list). Compare with
// BenchmarkUpdateUnverified, the single call a mark used to be: the
// difference is the cost of the verification.
func BenchmarkMarkVerified(b *testing.B) {
	_, _, p := benchList(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprint(i % 64)
		var err error
		if (i/64)%2 == 0 {
			err = p.MarkNotFound(ctx, id, "none")
		} else {
			err = p.MarkFailed(ctx, id, "crash")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateUnverified is one todo.update_item call and nothing else.
func BenchmarkUpdateUnverified(b *testing.B) {
	_, c, _ := benchList(b)
	ctx := context.Background()
	target := &Target{EntityID: []string{"todo.shopping_list"}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		name := fmt.Sprintf("item %d #404", i%64)
		if (i/64)%2 == 1 {
			name = fmt.Sprintf("item %d #failed", i%64)
		}
		if _, err := c.CallService(ctx, "todo", "update_item", target,
			map[string]any{"item": fmt.Sprint(i % 64), "rename": name, "description": "gemini-supply: x"}, false); err != nil {
			b.Fatal(err)
		}
	}
}
