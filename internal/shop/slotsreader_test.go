package shop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// slotsPage is a slots page as code reads it.
type slotsPage struct {
	root bool
	rows []browser.Row
}

func (p *slotsPage) Load(context.Context, string) error { return nil }
func (p *slotsPage) ReadElements(context.Context, map[string]string, string) (map[string]browser.Element, error) {
	return map[string]browser.Element{"root": {Found: p.root}}, nil
}
func (p *slotsPage) ReadRows(context.Context, string, map[string]string, string) ([]browser.Row, error) {
	return p.rows, nil
}

func slotRow(day, hours, fee, full string) browser.Row {
	return browser.Row{Fields: map[string]string{"day": day, "time": hours, "fee": fee, "full": full}}
}

// TestPageSlotsReaderSaysWhenItCannotRead: metro's reader is best effort;
// a page it cannot read is an error that says why, never a guess.
func TestPageSlotsReaderSaysWhenItCannotRead(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.Local)
	tests := []struct {
		name    string
		page    slotsPage
		want    string // "start-end fee available; …"
		wantErr string
	}{
		{name: "two windows, one full", page: slotsPage{root: true, rows: []browser.Row{
			slotRow("Saturday, November 28", "2 PM - 4 PM", "Free", "Full"),
			slotRow("Saturday, November 28", "10:00–12:00", "$4.99", ""),
		}}, want: "11-28 10:00-12:00 499 true; 11-28 14:00-16:00 0 false"},
		{name: "no window offered", page: slotsPage{root: true}, want: ""},
		{name: "signed out or laid out otherwise", page: slotsPage{rows: []browser.Row{slotRow("Today", "10-12", "", "")}}, wantErr: "shows no delivery slots"},
		{name: "a day it cannot read", page: slotsPage{root: true, rows: []browser.Row{slotRow("Bientôt", "10:00-12:00", "", "")}}, wantErr: "window 1: cannot read the day"},
		{name: "hours it cannot read", page: slotsPage{root: true, rows: []browser.Row{slotRow("Today", "morning", "", "")}}, wantErr: "window 1: cannot read the hours"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rd := &PageSlotsReader{URL: "https://shop.test/slots", Page: store.SlotsPage{Root: "#s", Row: ".s"}, Now: func() time.Time { return now }}
			page := tc.page
			r, err := rd.read(context.Background(), &page)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "read the delivery slots") {
					t.Fatalf("err = %v, want %q (reading %+v)", err, tc.wantErr, r)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range r.Slots {
				got = append(got, s.Start.Format("01-02 15:04")+"-"+s.End.Format("15:04")+fmt.Sprintf(" %d %v", s.Fee, s.Available))
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("read %q, want %q", g, tc.want)
			}
		})
	}
}
