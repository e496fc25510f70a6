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
